{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",place:Place(cpu),shape:[2,3,4]} : () -> tensor<2x3x4xf32>
    (%1) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[6,4]} : () -> tensor<2xi64>
    (%2, %3) = "pd_op.reshape" (%0, %1) {legacy_var_names:["r","r_xshape"]} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>, tensor<0x2x3x4xf32>
    (%4) = "pd_op.transpose" (%2) {legacy_var_names:["t"],perm:[1,0]} : (tensor<6x4xf32>) -> tensor<4x6xf32>
    (%5) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[2,4]} : () -> tensor<2xi64>
    (%6) = "pd_op.full" () {dtype:int32,place:Place(cpu),shape:[1],value:1} : () -> tensor<1xi32>
    (%7) = "pd_op.split" (%4, %5, %6) {} : (tensor<4x6xf32>, tensor<2xi64>, tensor<1xi32>) -> vec[tensor<4x2xf32>,tensor<4x4xf32>]
    (%8, %9) = "builtin.split" (%7) {legacy_var_names:["s0","s1"]} : (vec[tensor<4x2xf32>,tensor<4x4xf32>]) -> tensor<4x2xf32>, tensor<4x4xf32>
    (%10) = "builtin.combine" (%9, %8) {} : (tensor<4x4xf32>, tensor<4x2xf32>) -> vec[tensor<4x4xf32>,tensor<4x2xf32>]
    (%11) = "pd_op.concat" (%10, %6) {legacy_var_names:["cc"]} : (vec[tensor<4x4xf32>,tensor<4x2xf32>], tensor<1xi32>) -> tensor<4x6xf32>
    (%12) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[1,2]} : () -> tensor<2xi64>
    (%13) = "pd_op.full_int_array" () {dtype:int64,place:Place(cpu),value:[3,5]} : () -> tensor<2xi64>
    (%14) = "pd_op.slice" (%11, %12, %13) {axes:[0,1],decrease_axis:[],infer_flags:[1,1],legacy_var_names:["sl"]} : (tensor<4x6xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x3xf32>
    (%15) = "pd_op.cast" (%14) {dtype:float64,legacy_var_names:["c64"]} : (tensor<2x3xf32>) -> tensor<2x3xf64>
    (%16) = "pd_op.cast" (%14) {dtype:float16,legacy_var_names:["c16"]} : (tensor<2x3xf32>) -> tensor<2x3xf16>
    (%17) = "pd_op.full" () {dtype:float64,legacy_var_names:["fc"],place:Place(cpu),shape:[2,3],value:0.1} : () -> tensor<2x3xf64>
    (%18) = "pd_op.fetch" (%2) {col:0,name:"r"} : (tensor<6x4xf32>) -> tensor<6x4xf32>
    (%19) = "pd_op.fetch" (%4) {col:1,name:"t"} : (tensor<4x6xf32>) -> tensor<4x6xf32>
    (%20) = "pd_op.fetch" (%8) {col:2,name:"s0"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    (%21) = "pd_op.fetch" (%9) {col:3,name:"s1"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    (%22) = "pd_op.fetch" (%11) {col:4,name:"cc"} : (tensor<4x6xf32>) -> tensor<4x6xf32>
    (%23) = "pd_op.fetch" (%14) {col:5,name:"sl"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    (%24) = "pd_op.fetch" (%15) {col:6,name:"c64"} : (tensor<2x3xf64>) -> tensor<2x3xf64>
    (%25) = "pd_op.fetch" (%16) {col:7,name:"c16"} : (tensor<2x3xf16>) -> tensor<2x3xf16>
    (%26) = "pd_op.fetch" (%17) {col:8,name:"fc"} : (tensor<2x3xf64>) -> tensor<2x3xf64>
}
