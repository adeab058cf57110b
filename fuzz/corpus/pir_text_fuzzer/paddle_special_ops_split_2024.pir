{
(%0) = "pd_op.data" () {dtype:(pd_op.DataType)float64,name:"_jst.0.args.0",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[4,5,6],stop_gradient:[false]} : () -> builtin.tensor<4x5x6xf64>
(%1) = "pd_op.full_int_array" () {dtype:(pd_op.DataType)int64,place:(pd_op.Place)Place(cpu),stop_gradient:[true],value:[(Int64)2,(Int64)1,(Int64)2]} : () -> builtin.tensor<3xi64>
(%2) = "pd_op.full" () {dtype:(pd_op.DataType)int32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],stop_gradient:[true],value:(Double)1} : () -> builtin.tensor<1xi32>
(%3) = "pd_op.split" (%0, %1, %2) {stop_gradient:[false]} : (builtin.tensor<4x5x6xf64>, builtin.tensor<3xi64>, builtin.tensor<1xi32>) -> vec[builtin.tensor<4x2x6xf64>,builtin.tensor<4x1x6xf64>,builtin.tensor<4x2x6xf64>]
(%4, %5, %6) = "builtin.split" (%3) {stop_gradient:[false,false,false]} : (vec[builtin.tensor<4x2x6xf64>,builtin.tensor<4x1x6xf64>,builtin.tensor<4x2x6xf64>]) -> builtin.tensor<4x2x6xf64>, builtin.tensor<4x1x6xf64>, builtin.tensor<4x2x6xf64>
}
