{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(undefined:0),shape:[4,8],stop_gradient:[true]} : () -> tensor<4x8xf32>
    (%1) = "pd_op.exp" (%0) {stop_gradient:[true]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    (%2, %3) = "pd_op.argsort" (%1) {axis:-1,descending:true,stable:false,stop_gradient:[true,true]} : (tensor<4x8xf32>) -> tensor<4x8xf32>, tensor<4x8xi64>
    (%4) = "pd_op.pow" (%2) {stop_gradient:[true],y:2} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    (%5) = "pd_op.full" () {dtype:int32,place:Place(cpu),shape:[1],stop_gradient:[true],value:1} : () -> tensor<1xi32>
    (%6) = "pd_op.cumsum" (%4, %5) {exclusive:false,flatten:false,reverse:true,stop_gradient:[true]} : (tensor<4x8xf32>, tensor<1xi32>) -> tensor<4x8xf32>
    (%7) = "pd_op.flatten" (%6) {start_axis:0,stop_axis:1,stop_gradient:[true]} : (tensor<4x8xf32>) -> tensor<32xf32>
    (%8) = "pd_op.greater_equal" (%7, %7) {stop_gradient:[true]} : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xb>
    () = "builtin.shadow_output" (%8) {output_name:"y"} : (tensor<32xb>) -> 
}
