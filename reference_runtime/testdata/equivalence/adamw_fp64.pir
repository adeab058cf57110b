{
    (%0) = "pd_op.data" () {dtype:float64,name:"w@GRAD",place:Place(cpu),shape:[4,3]} : () -> tensor<4x3xf64>
    (%1) = "builtin.parameter" () {parameter_name:"w"} : () -> tensor<4x3xf64>
    (%2) = "builtin.parameter" () {parameter_name:"lr"} : () -> tensor<1xf64>
    (%3) = "builtin.parameter" () {parameter_name:"m1"} : () -> tensor<4x3xf64>
    (%4) = "builtin.parameter" () {parameter_name:"m2"} : () -> tensor<4x3xf64>
    (%5) = "builtin.parameter" () {parameter_name:"b1p"} : () -> tensor<1xf64>
    (%6) = "builtin.parameter" () {parameter_name:"b2p"} : () -> tensor<1xf64>
    (%7) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:0.8} : () -> tensor<1xf32>
    (%8) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:0.95} : () -> tensor<1xf32>
    (%9) = "pd_op.full" () {dtype:float32,place:Place(cpu),shape:[1],value:1e-06} : () -> tensor<1xf32>
    (%10, %11, %12, %13, %14, %15, %16) = "pd_op.adamw_" (%1, %0, %2, %3, %4, <<NULL VALUE>>, %5, %6, <<NULL VALUE>>, <<NULL VALUE>>, %7, %8, %9) {amsgrad:false,coeff:0.02,lazy_mode:false,legacy_var_names:["w","m1","m2","","b1p","b2p",""],lr_ratio:0.5,min_row_size_to_use_multithread:1000,multi_precision:false,op_role:2,use_global_beta_pow:false,with_decay:true} : (tensor<4x3xf64>, tensor<4x3xf64>, tensor<1xf64>, tensor<4x3xf64>, tensor<4x3xf64>, <<NULL TYPE>>, tensor<1xf64>, tensor<1xf64>, <<NULL TYPE>>, <<NULL TYPE>>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x3xf64>, tensor<4x3xf64>, tensor<4x3xf64>, <<NULL TYPE>>, tensor<1xf64>, tensor<1xf64>, <<NULL TYPE>>
    (%17) = "pd_op.fetch" (%10) {col:0,name:"w"} : (tensor<4x3xf64>) -> tensor<4x3xf64>
}
