{
    (%0) = "pd_op.data" () {dtype:float32,name:"i",place:Place(undefined:0),shape:[1],stop_gradient:[false]} : () -> tensor<1xf32>
    (%1) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],stop_gradient:[true],value:2} : () -> tensor<1xf32>
    (%2) = "pd_op.less_than" (%0, %1) {stop_gradient:[true]} : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xb>
    (%3) = "pd_op.if" (%2) {stop_gradient:[false]} -> tensor<1xf32> {
        (%4) = "pd_op.scale" (%0, %1) {bias:0.5,bias_after_scale:true,stop_gradient:[false]} : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
        () = "cf.yield" (%4) {} : (tensor<1xf32>) -> 
    } else {
        (%5) = "pd_op.relu" (%0) {stop_gradient:[false]} : (tensor<1xf32>) -> tensor<1xf32>
        () = "cf.yield" (%5) {} : (tensor<1xf32>) -> 
    }
    () = "builtin.shadow_output" (%3) {output_name:"out"} : (tensor<1xf32>) -> 
}
