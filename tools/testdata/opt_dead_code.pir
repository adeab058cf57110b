{
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[4,8],stop_gradient:[false]} : () -> builtin.tensor<4x8xf32>
    (%1) = "pd_op.data" () {dtype:(pd_op.DataType)bool,name:"cond",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[],stop_gradient:[true]} : () -> builtin.tensor<b>
    (%2) = "builtin.parameter" () {parameter_name:"w"} : () -> builtin.tensor<8x8xf32>
    (%3) = "builtin.parameter" () {parameter_name:"unused_w"} : () -> builtin.tensor<8xf32>
    (%4) = "pd_op.matmul" (%0, %2) {transpose_x:false,transpose_y:false} : (builtin.tensor<4x8xf32>, builtin.tensor<8x8xf32>) -> builtin.tensor<4x8xf32>
    (%5) = "pd_op.relu" (%4) {} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
    (%6) = "pd_op.tanh" (%5) {} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
    (%7) = "pd_op.all_reduce" (%4) {reduce_type:(Int32)0,ring_id:(Int32)0} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
    (%8) = "pd_op.relu_" (%7) {} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
    (%9) = "pd_op.if" (%1) {} -> builtin.tensor<4x8xf32> {
        (%10) = "pd_op.sigmoid" (%4) {} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
        (%11) = "pd_op.tanh" (%4) {} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
        () = "cf.yield" (%10) {} : (builtin.tensor<4x8xf32>) -> 
    } else {
        () = "cf.yield" (%4) {} : (builtin.tensor<4x8xf32>) -> 
    }
    () = "builtin.shadow_output" (%9) {output_name:"out"} : (builtin.tensor<4x8xf32>) -> 
}
