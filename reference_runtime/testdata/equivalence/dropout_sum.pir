{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(cpu),shape:[-1,8]} : () -> tensor<-1x8xf32>
    (%1, %2) = "pd_op.dropout" (%0, <<NULL VALUE>>) {fix_seed:false,is_test:false,legacy_var_names:["drop","mask"],mode:"upscale_in_train",p:0.5,seed:0} : (tensor<-1x8xf32>, <<NULL TYPE>>) -> tensor<-1x8xf32>, tensor<-1x8xu8>
    (%3) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[]} : () -> tensor<0xi64>
    (%4) = "pd_op.sum" (%1, %3) {dtype:Undefined,keepdim:false,legacy_var_names:["total"]} : (tensor<-1x8xf32>, tensor<0xi64>) -> tensor<f32>
    (%5) = "pd_op.fetch" (%1) {col:0,name:"drop"} : (tensor<-1x8xf32>) -> tensor<-1x8xf32>
    (%6) = "pd_op.fetch" (%2) {col:1,name:"mask"} : (tensor<-1x8xu8>) -> tensor<-1x8xu8>
    (%7) = "pd_op.fetch" (%4) {col:2,name:"total"} : (tensor<f32>) -> tensor<f32>
}
