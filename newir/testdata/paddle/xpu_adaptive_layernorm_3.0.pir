{
    (%1166) = "pd_op.data" () {dtype:bfloat16,name:"b",place:Place(undefined:0),shape:[2560],stop_gradient:[true]} : () -> tensor<2560xbf16>
    (%1167) = "pd_op.data" () {dtype:bfloat16,name:"w",place:Place(undefined:0),shape:[2560],stop_gradient:[true]} : () -> tensor<2560xbf16>
    (%1192) = "pd_op.data" () {dtype:bfloat16,name:"x",place:Place(undefined:0),shape:[2,4096,2560],stop_gradient:[true]} : () -> tensor<2x4096x2560xbf16>
    (%1203) = "pd_op.data" () {dtype:bfloat16,name:"shift",place:Place(undefined:0),shape:[2,2560],stop_gradient:[true]} : () -> tensor<2x2560xbf16>
    (%1204) = "pd_op.data" () {dtype:bfloat16,name:"scale",place:Place(undefined:0),shape:[2,2560],stop_gradient:[true]} : () -> tensor<2x2560xbf16>
    (%1222, %1223, %1224) = "pd_op.layer_norm" (%1192, %1167, %1166) {begin_norm_axis:2,epsilon:1e-06,stop_gradient:[true,true,true],struct_name:"/DiTBlockTwoStream/"} : (tensor<2x4096x2560xbf16>, tensor<2560xbf16>, tensor<2560xbf16>) -> tensor<2x4096x2560xbf16>, tensor<2x4096xf32>, tensor<2x4096xf32>
    (%1225) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],struct_name:"/DiTBlockTwoStream/",value:[1]} : () -> tensor<1xi64>
    (%1226) = "pd_op.unsqueeze" (%1204, %1225) {stop_gradient:[true],struct_name:"/DiTBlockTwoStream/"} : (tensor<2x2560xbf16>, tensor<1xi64>) -> tensor<2x1x2560xbf16>
    (%1227) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],struct_name:"/DiTBlockTwoStream/",value:1} : () -> tensor<1xf32>
    (%1228) = "pd_op.scale" (%1226, %1227) {bias:1,bias_after_scale:true,stop_gradient:[true],struct_name:"/DiTBlockTwoStream/"} : (tensor<2x1x2560xbf16>, tensor<1xf32>) -> tensor<2x1x2560xbf16>
    (%1229) = "pd_op.multiply" (%1222, %1228) {stop_gradient:[true],struct_name:"/DiTBlockTwoStream/"} : (tensor<2x4096x2560xbf16>, tensor<2x1x2560xbf16>) -> tensor<2x4096x2560xbf16>
    (%1230) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),stop_gradient:[true],struct_name:"/DiTBlockTwoStream/",value:[1]} : () -> tensor<1xi64>
    (%1231) = "pd_op.unsqueeze" (%1203, %1230) {stop_gradient:[true],struct_name:"/DiTBlockTwoStream/"} : (tensor<2x2560xbf16>, tensor<1xi64>) -> tensor<2x1x2560xbf16>
    (%1232) = "pd_op.add" (%1229, %1231) {stop_gradient:[true],struct_name:"/DiTBlockTwoStream/"} : (tensor<2x4096x2560xbf16>, tensor<2x1x2560xbf16>) -> tensor<2x4096x2560xbf16>
}
