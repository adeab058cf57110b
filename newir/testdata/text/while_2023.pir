{
    (%0) = "pd_op.full" () {dtype:(pd_op.DataType)int64,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Float)0} : () -> pd_op.tensor<1xi64>
    (%1) = "pd_op.full" () {dtype:(pd_op.DataType)int64,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Float)10} : () -> pd_op.tensor<1xi64>
    (%2) = "pd_op.less_than" (%0, %1) {stop_gradient:[true]} : (pd_op.tensor<1xi64>, pd_op.tensor<1xi64>) -> pd_op.tensor<1xb>
    (%3, %4) = "pd_op.while" (cond=%2, inputs=%0, %1) { 
    ^%arg_0, %arg_1
        (%5) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Float)1} : () -> pd_op.tensor<1xf32>
        (%6) = "pd_op.scale" (%arg_0, %5) {bias:(Float)1,bias_after_scale:true,stop_gradient:[true]} : (pd_op.tensor<1xi64>, pd_op.tensor<1xf32>) -> pd_op.tensor<1xi64>
        (%7) = "pd_op.less_than" (%6, %arg_1) {stop_gradient:[true]} : (pd_op.tensor<1xi64>, pd_op.tensor<1xi64>) -> pd_op.tensor<1xb>
        () = "cf.yield" (%7, %6, %arg_1) {} : (pd_op.tensor<1xb>, pd_op.tensor<1xi64>, pd_op.tensor<1xi64>) -> 
    }
    (%8) = "pd_op.fetch" (%3) {col:(Int32)0,name:"fetch0"} : (pd_op.tensor<1xi64>) -> pd_op.tensor<1xi64>
}
