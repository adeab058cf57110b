{
    (%0) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[1],stop_gradient:[true],value:0} : () -> tensor<1xi64>
    (%1) = "pd_op.full" () {dtype:int64,place:Place(cpu),shape:[1],stop_gradient:[true],value:10} : () -> tensor<1xi64>
    (%2) = "pd_op.less_than" (%0, %1) {stop_gradient:[true]} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xb>
    (%3) = "pd_op.while" (cond=%2, inputs=%0) { 
    ^%arg_0 {stop_gradient:[true]}
        (%4) = "pd_op.increment_" (%arg_0) {stop_gradient:[true],value:1} : (tensor<1xi64>) -> tensor<1xi64>
        (%5) = "pd_op.less_than" (%4, %1) {stop_gradient:[true]} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xb>
        () = "cf.yield" (%5, %4) {} : (tensor<1xb>, tensor<1xi64>) -> 
    }
    () = "builtin.shadow_output" (%3) {output_name:"i"} : (tensor<1xi64>) -> 
}
