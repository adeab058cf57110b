{
    (%0) = "builtin.get_parameter" () {parameter_name:"fc_0.w_0"} : () -> pd_op.tensor<4x4xf32>
    (%1) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[2,4],stop_gradient:[true]} : () -> pd_op.tensor<2x4xf32>
    (%2) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Float)0} : () -> pd_op.tensor<1xf32>
    (%3) = "pd_op.mean" (%1) {axis:(pd_op.IntArray)[],keepdim:false,stop_gradient:[true]} : (pd_op.tensor<2x4xf32>) -> pd_op.tensor<f32>
    (%4) = "pd_op.greater_equal" (%3, %2) {stop_gradient:[true]} : (pd_op.tensor<f32>, pd_op.tensor<1xf32>) -> pd_op.tensor<1xb>
    (%5) = "pd_op.if" (%4) {} -> pd_op.tensor<2x4xf32> {
        (%6) = "pd_op.matmul" (%1, %0) {stop_gradient:[false],transpose_x:false,transpose_y:false} : (pd_op.tensor<2x4xf32>, pd_op.tensor<4x4xf32>) -> pd_op.tensor<2x4xf32>
        () = "cf.yield" (%6) {} : (pd_op.tensor<2x4xf32>) -> 
    } else {
        (%7) = "pd_op.relu" (%1) {stop_gradient:[true]} : (pd_op.tensor<2x4xf32>) -> pd_op.tensor<2x4xf32>
        () = "cf.yield" (%7) {} : (pd_op.tensor<2x4xf32>) -> 
    }
    (%8) = "pd_op.fetch" (%5) {col:(Int32)0,name:"fetch0"} : (pd_op.tensor<2x4xf32>) -> pd_op.tensor<2x4xf32>
}
