{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(cpu),shape:[2,3]} : () -> tensor<2x3xf32>
    (%1) = "pd_op.full" () {dtype:int64,legacy_var_names:["i"],place:Place(cpu),shape:[1],value:0} : () -> tensor<1xi64>
    (%2) = "pd_op.full" () {dtype:int64,legacy_var_names:["n"],place:Place(cpu),shape:[1],value:5} : () -> tensor<1xi64>
    (%3) = "pd_op.full" () {dtype:float32,legacy_var_names:["acc"],place:Place(cpu),shape:[2,3],value:0} : () -> tensor<2x3xf32>
    (%4) = "pd_op.less_than" (%1, %2) {legacy_var_names:["cond"]} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xb>
    (%5, %6) = "pd_op.while" (cond=%4, inputs=%3, %1) {legacy_var_names:["acc","i"]} {
    ^%arg_0 {legacy_var_name:"acc"}, %arg_1 {legacy_var_name:"i"}
        (%7) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:0.5} : () -> tensor<1xf32>
        (%8) = "pd_op.scale" (%arg_0, %7) {bias:0,bias_after_scale:true,legacy_var_names:["t"]} : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
        (%9) = "pd_op.add" (%8, %0) {legacy_var_names:["acc"]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
        (%10) = "pd_op.increment_" (%arg_1) {legacy_var_names:["i"],value:1} : (tensor<1xi64>) -> tensor<1xi64>
        (%11) = "pd_op.less_than" (%10, %2) {legacy_var_names:["cond"]} : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xb>
        () = "cf.yield" (%11, %9, %10) {} : (tensor<1xb>, tensor<2x3xf32>, tensor<1xi64>) ->
    }
    (%12) = "pd_op.fetch" (%5) {col:0,name:"acc"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%13) = "pd_op.fetch" (%6) {col:1,name:"i"} : (tensor<1xi64>) -> tensor<1xi64>
}
