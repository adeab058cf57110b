{
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[4,8],stop_gradient:[false]} : () -> builtin.tensor<4x8xf32>
    (%1) = "builtin.parameter" () {parameter_name:"w"} : () -> builtin.tensor<8x2xf32>
    (%2) = "pd_op.matmul" (%0, %1) {stop_gradient:[false],transpose_x:false,transpose_y:false} : (builtin.tensor<4x8xf32>, builtin.tensor<8x2xf32>) -> builtin.tensor<4x2xf32>
    (%3) = "pd_op.relu" (%2) {stop_gradient:[false]} : (builtin.tensor<4x2xf32>) -> builtin.tensor<4x2xf32>
    () = "builtin.shadow_output" (%3) {output_name:"out"} : (builtin.tensor<4x2xf32>) -> 
}
