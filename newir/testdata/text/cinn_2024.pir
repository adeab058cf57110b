{
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[1,-1,768],stop_gradient:[false],sym_shape_str:"shape[1, S0, 768], data[NULL]"} : () -> pd_op.tensor<1x-1x768xf32>
    (%1) = cinn_op.fusion () -> pd_op.tensor<1x-1x768xf32> {
    (%2) = "pd_op.exp" (%0) {stop_gradient:[false],sym_shape_str:"shape[1, S0, 768], data[NULL]"} : (pd_op.tensor<1x-1x768xf32>) -> pd_op.tensor<1x-1x768xf32>
    () = "cf.yield" (%2) {} : (pd_op.tensor<1x-1x768xf32>) ->  
 }
    (%3) = "pd_op.fetch" (%1) {col:(Int32)0,name:"out"} : (pd_op.tensor<1x-1x768xf32>) -> pd_op.tensor<1x-1x768xf32>
}
