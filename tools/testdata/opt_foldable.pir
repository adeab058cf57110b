{
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[4,8],stop_gradient:[false]} : () -> builtin.tensor<4x8xf32>
    (%1) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],value:(Double)1} : () -> builtin.tensor<1xf32>
    (%2) = "pd_op.scale" (%0, %1) {bias:(Float)0,bias_after_scale:true} : (builtin.tensor<4x8xf32>, builtin.tensor<1xf32>) -> builtin.tensor<4x8xf32>
    (%3) = "pd_op.cast" (%2) {dtype:(pd_op.DataType)float32} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
    (%4) = "pd_op.full_int_array" () {dtype:(pd_op.DataType)int64,place:(pd_op.Place)Place(cpu),value:[(Int64)4,(Int64)8]} : () -> builtin.tensor<2xi64>
    (%5, %6) = "pd_op.reshape" (%3, %4) {} : (builtin.tensor<4x8xf32>, builtin.tensor<2xi64>) -> builtin.tensor<4x8xf32>, builtin.tensor<0x4x8xf32>
    (%7) = "pd_op.assign" (%5) {} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
    (%8) = "pd_op.assign" (%7) {} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
    (%9) = "pd_op.relu" (%8) {} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
    (%10) = "pd_op.full" () {dtype:(pd_op.DataType)float32,place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[1],value:(Double)2} : () -> builtin.tensor<1xf32>
    (%11) = "pd_op.scale" (%9, %10) {bias:(Float)0,bias_after_scale:true} : (builtin.tensor<4x8xf32>, builtin.tensor<1xf32>) -> builtin.tensor<4x8xf32>
    (%12) = "pd_op.cast" (%11) {dtype:(pd_op.DataType)float16} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf16>
    () = "builtin.shadow_output" (%12) {output_name:"out"} : (builtin.tensor<4x8xf16>) -> 
}
