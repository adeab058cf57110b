{
    (%0) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"linear_1.b_0",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<2xf32>
    (%1) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"linear_1.w_0",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<8x2xf32>
    (%2) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"linear_0.b_0",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<8xf32>
    (%3) = "builtin.parameter" () {is_distributed:[false],is_parameter:[true],need_clip:[true],parameter_name:"linear_0.w_0",persistable:[true],stop_gradient:[false],trainable:[true]} : () -> tensor<4x8xf32>
    (%4) = "pd_op.data" () {dtype:float32,name:"x",persistable:[false],place:Place(undefined:0),shape:[-1,4],stop_gradient:[true]} : () -> tensor<-1x4xf32>
    (%5) = "pd_op.matmul" (%4, %3) {persistable:[false],stop_gradient:[false],transpose_x:false,transpose_y:false} : (tensor<-1x4xf32>, tensor<4x8xf32>) -> tensor<-1x8xf32>
    (%6) = "pd_op.add" (%5, %2) {persistable:[false],stop_gradient:[false]} : (tensor<-1x8xf32>, tensor<8xf32>) -> tensor<-1x8xf32>
    (%7) = "pd_op.relu" (%6) {persistable:[false],stop_gradient:[false]} : (tensor<-1x8xf32>) -> tensor<-1x8xf32>
    (%8) = "pd_op.matmul" (%7, %1) {persistable:[false],stop_gradient:[false],transpose_x:false,transpose_y:false} : (tensor<-1x8xf32>, tensor<8x2xf32>) -> tensor<-1x2xf32>
    (%9) = "pd_op.add" (%8, %0) {persistable:[false],stop_gradient:[false]} : (tensor<-1x2xf32>, tensor<2xf32>) -> tensor<-1x2xf32>
    (%10) = "pd_op.mean" (%9) {axis:[],keepdim:false,persistable:[false],stop_gradient:[false]} : (tensor<-1x2xf32>) -> tensor<f32>
    (%11) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[],stop_gradient:[true],value:1} : () -> tensor<f32>
    (%12) = "pd_op.mean_grad" (%9, %11) {axis:[],keepdim:false,reduce_all:false,stop_gradient:[false]} : (tensor<-1x2xf32>, tensor<f32>) -> tensor<-1x2xf32>
    (%13, %14) = "pd_op.add_grad" (%8, %0, %12) {axis:-1,stop_gradient:[false,false]} : (tensor<-1x2xf32>, tensor<2xf32>, tensor<-1x2xf32>) -> tensor<-1x2xf32>, tensor<2xf32>
    (%15, %16) = "pd_op.matmul_grad" (%7, %1, %13) {stop_gradient:[false,false],transpose_x:false,transpose_y:false} : (tensor<-1x8xf32>, tensor<8x2xf32>, tensor<-1x2xf32>) -> tensor<-1x8xf32>, tensor<8x2xf32>
    (%17) = "pd_op.relu_grad" (%7, %15) {stop_gradient:[false]} : (tensor<-1x8xf32>, tensor<-1x8xf32>) -> tensor<-1x8xf32>
    (%18, %19) = "pd_op.add_grad" (%5, %2, %17) {axis:-1,stop_gradient:[false,false]} : (tensor<-1x8xf32>, tensor<8xf32>, tensor<-1x8xf32>) -> tensor<-1x8xf32>, tensor<8xf32>
    (%20, %21) = "pd_op.matmul_grad" (%4, %3, %18) {stop_gradient:[false,false],transpose_x:false,transpose_y:false} : (tensor<-1x4xf32>, tensor<4x8xf32>, tensor<-1x8xf32>) -> tensor<-1x4xf32>, tensor<4x8xf32>
    (%22) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:0.01} : () -> tensor<1xf32>
    (%23) = "builtin.combine" (%3, %1) {stop_gradient:[false]} : (tensor<4x8xf32>, tensor<8x2xf32>) -> vec[tensor<4x8xf32>,tensor<8x2xf32>]
    (%24) = "builtin.slice" (%23) {index:1,stop_gradient:[false]} : (vec[tensor<4x8xf32>,tensor<8x2xf32>]) -> tensor<8x2xf32>
    (%25, %26) = "pd_op.sgd_" (%3, %22, %21, <<NULL VALUE>>) {multi_precision:false,stop_gradient:[false,false]} : (tensor<4x8xf32>, tensor<1xf32>, tensor<4x8xf32>, <<NULL TYPE>>) -> tensor<4x8xf32>, <<NULL TYPE>>
    (%27, %28) = "pd_op.sgd_" (%24, %22, %16, <<NULL VALUE>>) {multi_precision:false,stop_gradient:[false,false]} : (tensor<8x2xf32>, tensor<1xf32>, tensor<8x2xf32>, <<NULL TYPE>>) -> tensor<8x2xf32>, <<NULL TYPE>>
    (%29, %30) = "pd_op.sgd_" (%2, %22, %19, <<NULL VALUE>>) {multi_precision:false,stop_gradient:[false,false]} : (tensor<8xf32>, tensor<1xf32>, tensor<8xf32>, <<NULL TYPE>>) -> tensor<8xf32>, <<NULL TYPE>>
    (%31, %32) = "pd_op.sgd_" (%0, %22, %14, <<NULL VALUE>>) {multi_precision:false,stop_gradient:[false,false]} : (tensor<2xf32>, tensor<1xf32>, tensor<2xf32>, <<NULL TYPE>>) -> tensor<2xf32>, <<NULL TYPE>>
    () = "builtin.shadow_output" (%10) {output_name:"loss"} : (tensor<f32>) -> 
}
