{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(cpu),shape:[-1,3]} : () -> tensor<-1x3xf32>
    (%1) = "pd_op.data" () {dtype:int64,name:"label",place:Place(cpu),shape:[-1,1]} : () -> tensor<-1x1xi64>
    (%2) = "builtin.parameter" () {parameter_name:"w"} : () -> tensor<3x5xf32>
    (%3) = "builtin.parameter" () {parameter_name:"b"} : () -> tensor<5xf32>
    (%4) = "builtin.parameter" () {parameter_name:"lr"} : () -> tensor<1xf32>
    (%5) = "pd_op.matmul" (%0, %2) {legacy_var_names:["xw"],op_role:0,transpose_x:false,transpose_y:false} : (tensor<-1x3xf32>, tensor<3x5xf32>) -> tensor<-1x5xf32>
    (%6) = "pd_op.add" (%5, %3) {legacy_var_names:["logits"],op_role:0} : (tensor<-1x5xf32>, tensor<5xf32>) -> tensor<-1x5xf32>
    (%7, %8) = "pd_op.cross_entropy_with_softmax" (%6, %1) {axis:-1,ignore_index:-100,legacy_var_names:["softmax","ce"],numeric_stable_mode:true,op_role:0,soft_label:false,use_softmax:true} : (tensor<-1x5xf32>, tensor<-1x1xi64>) -> tensor<-1x5xf32>, tensor<-1x1xf32>
    (%9) = "pd_op.mean_all" (%8) {legacy_var_names:["loss"],op_role:256} : (tensor<-1x1xf32>) -> tensor<f32>
    (%10) = "pd_op.full" () {dtype:float32,legacy_var_names:["loss@GRAD"],op_role:257,place:Place(cpu),shape:[],value:1} : () -> tensor<f32>
    (%11) = "pd_op.mean_all_grad" (%8, %10) {legacy_var_names:["ce@GRAD"],op_role:1} : (tensor<-1x1xf32>, tensor<f32>) -> tensor<-1x1xf32>
    (%12) = "pd_op.cross_entropy_with_softmax_grad" (%1, %7, %11) {axis:-1,ignore_index:-100,legacy_var_names:["logits@GRAD"],numeric_stable_mode:true,op_role:1,soft_label:false,use_softmax:true} : (tensor<-1x1xi64>, tensor<-1x5xf32>, tensor<-1x1xf32>) -> tensor<-1x5xf32>
    (%13, %14) = "pd_op.add_grad" (%5, %3, %12) {axis:-1,legacy_var_names:["xw@GRAD","b@GRAD"],op_role:1} : (tensor<-1x5xf32>, tensor<5xf32>, tensor<-1x5xf32>) -> tensor<-1x5xf32>, tensor<5xf32>
    (%15, %16) = "pd_op.matmul_grad" (%0, %2, %13) {legacy_var_names:["","w@GRAD"],op_role:1,transpose_x:false,transpose_y:false} : (tensor<-1x3xf32>, tensor<3x5xf32>, tensor<-1x5xf32>) -> <<NULL TYPE>>, tensor<3x5xf32>
    (%17, %18) = "pd_op.sgd_" (%2, %4, %16, <<NULL VALUE>>) {legacy_var_names:["w",""],multi_precision:false,op_role:2} : (tensor<3x5xf32>, tensor<1xf32>, tensor<3x5xf32>, <<NULL TYPE>>) -> tensor<3x5xf32>, <<NULL TYPE>>
    (%19, %20) = "pd_op.sgd_" (%3, %4, %14, <<NULL VALUE>>) {legacy_var_names:["b",""],multi_precision:false,op_role:2} : (tensor<5xf32>, tensor<1xf32>, tensor<5xf32>, <<NULL TYPE>>) -> tensor<5xf32>, <<NULL TYPE>>
    (%21) = "pd_op.fetch" (%9) {col:0,name:"loss"} : (tensor<f32>) -> tensor<f32>
}
