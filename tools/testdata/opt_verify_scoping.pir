// The verifier on parsed control flow: a program with pd_op.if and pd_op.while verifies, and a read
// of a value defined in an earlier op's region is out of scope. The parser resolves value names
// program-wide, so that read parses; the verifier is what rejects it.
// RUN: %irm opt %s --split-input-file --verify-diagnostics | %FileCheck %s
// The finding as opt prints it without --verify-diagnostics: located at its op.
// RUN: expect_exit 1 %irm opt %s --split-input-file 2>&1 | %FileCheck %s --check-prefix=PLAIN
// PLAIN: opt_verify_scoping.pir: op 4 (pd_op.matmul): error: the input IR is invalid: operand 1 ('y') reads result 0 of op 0 (pd_op.relu) in region 0 of op 2 (pd_op.if), which is out of scope here: a region sees only its own values and those of the blocks enclosing it

// CHECK: (%7) = "pd_op.matmul" (%4, %1)
// CHECK-NEXT: {{^}$}}
// CHECK-NEXT: // -----
// CHECK-NOT: {{.}}
{
    (%0) = "builtin.parameter" () {parameter_name:"c"} : () -> builtin.tensor<1xb>
    (%1) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%2) = "pd_op.if" (%0) {fake_false_branch:true} -> builtin.tensor<2xf32> {
        (%3) = "pd_op.relu" (%1) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        () = "cf.yield" (%3) {} : (builtin.tensor<2xf32>) -> 
    } else {
        () = "cf.yield" (%1) {} : (builtin.tensor<2xf32>) -> 
    }
    (%4) = "pd_op.while" (cond=%0, inputs=%2) {
        ^%arg_0 {stop_gradient:[false]}
        (%5) = "pd_op.relu" (%arg_0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        (%6) = "pd_op.less_than" (%5, %arg_0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
        () = "cf.yield" (%6, %5) {} : (builtin.tensor<1xb>, builtin.tensor<2xf32>) -> 
    }
    (%7) = "pd_op.matmul" (%4, %1) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<f32>
}

// -----

{
    (%0) = "builtin.parameter" () {parameter_name:"c"} : () -> builtin.tensor<1xb>
    (%1) = "builtin.parameter" () {parameter_name:"x"} : () -> builtin.tensor<2xf32>
    (%2) = "pd_op.if" (%0) {fake_false_branch:true} -> builtin.tensor<2xf32> {
        (%3) = "pd_op.relu" (%1) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        () = "cf.yield" (%3) {} : (builtin.tensor<2xf32>) -> 
    } else {
        () = "cf.yield" (%1) {} : (builtin.tensor<2xf32>) -> 
    }
    (%4) = "pd_op.while" (cond=%0, inputs=%2) {
        ^%arg_0 {stop_gradient:[false]}
        (%5) = "pd_op.relu" (%arg_0) {} : (builtin.tensor<2xf32>) -> builtin.tensor<2xf32>
        (%6) = "pd_op.less_than" (%5, %arg_0) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<1xb>
        () = "cf.yield" (%6, %5) {} : (builtin.tensor<1xb>, builtin.tensor<2xf32>) -> 
    }
    // expected-error @+1 {{operand 1 ('y') reads result 0 of op 0 (pd_op.relu) in region 0 of op 2 (pd_op.if), which is out of scope here: a region sees only its own values and those of the blocks enclosing it}}
    (%7) = "pd_op.matmul" (%4, %3) {} : (builtin.tensor<2xf32>, builtin.tensor<2xf32>) -> builtin.tensor<f32>
}
