{
    (%2) = "builtin.parameter" () {parameter_name:"linear_0.w_0",persistable:[true],stop_gradient:[false]} : () -> builtin.tensor<32x64xbf16>
    (%38) = "pd_op.data" () {dtype:(pd_op.DataType)bfloat16,name:"input",persistable:[false],place:(pd_op.Place)Place(gpu:0),shape:(pd_op.IntArray)[16,1,64],stop_gradient:[false]} : () -> builtin.tensor<16x1x64xbf16>
    (%50) = "pd_op.matmul" (%38, %2) {persistable:[false],stop_gradient:[false],transpose_x:false,transpose_y:true} : (builtin.tensor<16x1x64xbf16>, builtin.tensor<32x64xbf16>) -> builtin.tensor<16x1x32xbf16>
    (%51) = "pd_op.cast" (%50) {dtype:(pd_op.DataType)float32,stop_gradient:[false]} : (builtin.tensor<16x1x32xbf16>) -> builtin.tensor<16x1x32xf32>
    (%52, %53) = "pd_op.dropout" (%51, <<NULL VALUE>>) {fix_seed:false,is_test:false,mode:"upscale_in_train",p:(Float)0.1,seed:(Int32)0,stop_gradient:[false,true]} : (builtin.tensor<16x1x32xf32>, <<NULL TYPE>>) -> builtin.tensor<16x1x32xf32>, builtin.tensor<16x1x32xu8>
    (%54) = "pd_op.softmax" (%52) {axis:(Int32)-1,stop_gradient:[false]} : (builtin.tensor<16x1x32xf32>) -> builtin.tensor<16x1x32xf32>
    (%55) = "pd_op.transpose" (%54) {perm:[(Int32)1,(Int32)0,(Int32)2],stop_gradient:[false]} : (builtin.tensor<16x1x32xf32>) -> builtin.tensor<1x16x32xf32>
    (%56) = "pd_op.full_int_array" () {dtype:(pd_op.DataType)int64,place:(pd_op.Place)Place(cpu),stop_gradient:[true],value:[(Int64)-1]} : () -> builtin.tensor<1xi64>
    (%57) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Double)2} : () -> builtin.tensor<1xf32>
    (%58) = "pd_op.scale" (%55, %57) {bias:(Float)0,bias_after_scale:true,stop_gradient:[false]} : (builtin.tensor<1x16x32xf32>, builtin.tensor<1xf32>) -> builtin.tensor<1x16x32xf32>
    (%59) = "pd_op.fetch" (%58) {col:(Int32)0,name:"fetch_name_0",persistable:[true],stop_gradient:[false]} : (builtin.tensor<1x16x32xf32>) -> builtin.tensor<1x16x32xf32>
}
