{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(cpu),shape:[3,4]} : () -> tensor<3x4xf32>
    (%1) = "pd_op.data" () {dtype:float32,name:"v",place:Place(cpu),shape:[2]} : () -> tensor<2xf32>
    (%2) = "pd_op.data" () {dtype:float32,name:"g",place:Place(cpu),shape:[3,4]} : () -> tensor<3x4xf32>
    (%3) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[-1]} : () -> tensor<1xi64>
    (%4) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[-5]} : () -> tensor<1xi64>
    (%5) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[-2]} : () -> tensor<1xi64>
    (%6) = "pd_op.set_value_with_tensor_" (%0, %1, %3, %4, %5) {axes:[1],decrease_axes:[],legacy_var_names:["x"],none_axes:[]} : (tensor<3x4xf32>, tensor<2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x4xf32>
    (%7) = "pd_op.full" () {dtype:int64,legacy_var_names:["s0"],place:Place(cpu),shape:[1],value:1} : () -> tensor<1xi64>
    (%8) = "builtin.combine" (%7) {} : (tensor<1xi64>) -> vec[tensor<1xi64>]
    (%9) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[2]} : () -> tensor<1xi64>
    (%10) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[1]} : () -> tensor<1xi64>
    (%11) = "pd_op.set_value" (%6, %8, %9, %10) {axes:[0],decrease_axes:[0],legacy_var_names:["y"],none_axes:[],shape:[4],values:[(pd_op.Scalar:float32)1.5,(pd_op.Scalar:float32)-2.0,(pd_op.Scalar:float32)3.25,(pd_op.Scalar:float32)0.5]} : (tensor<3x4xf32>, vec[tensor<1xi64>], tensor<1xi64>, tensor<1xi64>) -> tensor<3x4xf32>
    (%12) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[0]} : () -> tensor<1xi64>
    (%13) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[3]} : () -> tensor<1xi64>
    (%14) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[2]} : () -> tensor<1xi64>
    (%15) = "pd_op.set_value" (%11, %12, %13, %14) {axes:[0],decrease_axes:[],legacy_var_names:["y2"],none_axes:[1],shape:[1],values:[(pd_op.Scalar:int64)7]} : (tensor<3x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x4xf32>
    (%16, %17) = "pd_op.set_value_with_tensor_grad" (%1, %2, %3, %4, %5) {axes:[1],decrease_axes:[],legacy_var_names:["xg","vg"],none_axes:[]} : (tensor<2xf32>, tensor<3x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3x4xf32>, tensor<2xf32>
    (%18) = "pd_op.fetch" (%6) {col:0,name:"x"} : (tensor<3x4xf32>) -> tensor<3x4xf32>
    (%19) = "pd_op.fetch" (%11) {col:1,name:"y"} : (tensor<3x4xf32>) -> tensor<3x4xf32>
    (%20) = "pd_op.fetch" (%15) {col:2,name:"y2"} : (tensor<3x4xf32>) -> tensor<3x4xf32>
    (%21) = "pd_op.fetch" (%16) {col:3,name:"xg"} : (tensor<3x4xf32>) -> tensor<3x4xf32>
    (%22) = "pd_op.fetch" (%17) {col:4,name:"vg"} : (tensor<2xf32>) -> tensor<2xf32>
}
