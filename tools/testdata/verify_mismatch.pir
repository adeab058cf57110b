// Input of opt_verify_diagnostics.test, wrong on purpose: the first piece expects its finding on
// the wrong line, the second expects one that never happens. `//` comments may also end a line.
{
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[4,8],stop_gradient:[false]} : () -> builtin.tensor<4x8xf32>
    (%1) = "builtin.parameter" () {parameter_name:"w"} : () -> builtin.tensor<7x2xf32> // 7 rows
    // A comment with braces { { } does not open a region.
    (%2) = "pd_op.relu" (%0) {} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
    // }
    // expected-error @+1 {{inner dims differ}}
    (%3) = "pd_op.relu" (%2) {} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
    // The finding is here, two lines below where the comment above points.
    (%4) = "pd_op.matmul" (%0, %1) {transpose_x:false,transpose_y:false} : (builtin.tensor<4x8xf32>, builtin.tensor<7x2xf32>) -> builtin.tensor<4x2xf32>
}
   // -----  
{
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[4,8],stop_gradient:[false]} : () -> builtin.tensor<4x8xf32>
    // expected-error @+2 {{never said}}
    () = "builtin.shadow_output" (%0) {output_name:"out"} : (builtin.tensor<4x8xf32>) -> // last
    // end
}
