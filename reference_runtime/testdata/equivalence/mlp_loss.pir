{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(cpu),shape:[-1,3,6]} : () -> tensor<-1x3x6xf32>
    (%1) = "pd_op.data" () {dtype:int64,name:"label",place:Place(cpu),shape:[-1,3,1]} : () -> tensor<-1x3x1xi64>
    (%2) = "builtin.parameter" () {parameter_name:"w1"} : () -> tensor<5x6xf32>
    (%3) = "builtin.parameter" () {parameter_name:"b1"} : () -> tensor<5xf32>
    (%4) = "builtin.parameter" () {parameter_name:"w2"} : () -> tensor<5x5xf32>
    (%5) = "builtin.parameter" () {parameter_name:"pos"} : () -> tensor<3xf32>
    (%6) = "pd_op.matmul" (%0, %2) {legacy_var_names:["fc1"],transpose_x:false,transpose_y:true} : (tensor<-1x3x6xf32>, tensor<5x6xf32>) -> tensor<-1x3x5xf32>
    (%7) = "pd_op.add" (%6, %3) {legacy_var_names:["fc1_b"]} : (tensor<-1x3x5xf32>, tensor<5xf32>) -> tensor<-1x3x5xf32>
    (%8) = "pd_op.relu" (%7) {legacy_var_names:["h"]} : (tensor<-1x3x5xf32>) -> tensor<-1x3x5xf32>
    (%9) = "pd_op.matmul" (%8, %4) {legacy_var_names:["fc2"],transpose_x:false,transpose_y:false} : (tensor<-1x3x5xf32>, tensor<5x5xf32>) -> tensor<-1x3x5xf32>
    (%10) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[3,1]} : () -> tensor<2xi64>
    (%11, %12) = "pd_op.reshape" (%5, %10) {} : (tensor<3xf32>, tensor<2xi64>) -> tensor<3x1xf32>, <<NULL TYPE>>
    (%13) = "pd_op.add" (%9, %11) {legacy_var_names:["logits"]} : (tensor<-1x3x5xf32>, tensor<3x1xf32>) -> tensor<-1x3x5xf32>
    (%14, %15) = "pd_op.cross_entropy_with_softmax" (%13, %1) {axis:-1,ignore_index:-100,legacy_var_names:["softmax","ce"],numeric_stable_mode:true,soft_label:false,use_softmax:true} : (tensor<-1x3x5xf32>, tensor<-1x3x1xi64>) -> tensor<-1x3x5xf32>, tensor<-1x3x1xf32>
    (%16) = "pd_op.mean_all" (%15) {legacy_var_names:["loss"]} : (tensor<-1x3x1xf32>) -> tensor<f32>
    (%17) = "pd_op.fetch" (%13) {col:0,name:"logits"} : (tensor<-1x3x5xf32>) -> tensor<-1x3x5xf32>
    (%18) = "pd_op.fetch" (%16) {col:1,name:"loss"} : (tensor<f32>) -> tensor<f32>
}
