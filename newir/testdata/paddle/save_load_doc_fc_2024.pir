{
    (%0) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"fc_0.b_0",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> builtin.tensor<30xf32>
    (%1) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"fc_0.w_0",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> builtin.tensor<30x30xf32>
    (%2) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"A",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[-1,30],stop_gradient:[true]} : () -> builtin.tensor<-1x30xf32>
    (%3) = "pd_op.matmul" (%2, %1) {stop_gradient:[false],transpose_x:false,transpose_y:false} : (builtin.tensor<-1x30xf32>, builtin.tensor<30x30xf32>) -> builtin.tensor<-1x30xf32>
    (%4) = "pd_op.add" (%3, %0) {stop_gradient:[false]} : (builtin.tensor<-1x30xf32>, builtin.tensor<30xf32>) -> builtin.tensor<-1x30xf32>
    (%5) = "pd_op.relu" (%4) {stop_gradient:[false]} : (builtin.tensor<-1x30xf32>) -> builtin.tensor<-1x30xf32>
    (%6) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Double)1} : () -> builtin.tensor<1xf32>
    (%7) = "pd_op.scale" (%5, %6) {bias:(Float)0,bias_after_scale:true,stop_gradient:[false]} : (builtin.tensor<-1x30xf32>, builtin.tensor<1xf32>) -> builtin.tensor<-1x30xf32>
    (%8) = "pd_op.fetch" (%7) {col:(Int32)0,name:"fetch_name_0",persistable:[true],stop_gradient:[false]} : (builtin.tensor<-1x30xf32>) -> builtin.tensor<-1x30xf32>
}
