{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(cpu),shape:[2,3]} : () -> tensor<2x3xf32>
    (%1) = "pd_op.data" () {dtype:bool,name:"c",place:Place(cpu),shape:[1]} : () -> tensor<1xb>
    (%2) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:3} : () -> tensor<1xf32>
    (%3) = "pd_op.scale" (%0, %2) {bias:0,bias_after_scale:true,legacy_var_names:["y"]} : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
    (%4) = "pd_op.if" (%1) {legacy_var_names:["y"]} -> tensor<2x3xf32> {
        (%5) = "pd_op.tanh" (%0) {legacy_var_names:["t"]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
        (%6) = "pd_op.add_" (%3, %5) {legacy_var_names:["y"]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
        () = "cf.yield" (%6) {} : (tensor<2x3xf32>) ->
    } else {
        () = "cf.yield" (%3) {} : (tensor<2x3xf32>) ->
    }
    (%7) = "pd_op.multiply" (%4, %0) {legacy_var_names:["out"]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    (%8) = "pd_op.fetch" (%4) {col:0,name:"y"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%9) = "pd_op.fetch" (%7) {col:1,name:"out"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
}
