{
    (%0) = "builtin.parameter" () {is_persistable:[true],parameter_name:"w0",stop_gradient:[false]} : () -> builtin.tensor<8x8xf32>
    (%1) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"input",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[2,4,8],stop_gradient:[true]} : () -> builtin.tensor<2x4x8xf32>
    (%2) = "dist_op.shard_tensor" (%1) {op_dist_attr:mesh_shape:[2],process_ids:[0,1],result(0):{dims_maping:[-1,-1,-1]}} : (builtin.tensor<2x4x8xf32>) -> pd_dist.tensor<2x4x8xf32, mesh_shape:[2],dims_mappings:[-1,-1,-1]>
    (%3) = "dist_op.shard_tensor" (%0) {op_dist_attr:{mesh:{shape:[2],process_ids:[0,1]},result(0):{dims_maping:[0,-1]}}} : (builtin.tensor<8x8xf32>) -> pd_dist.tensor<8x8xf32, mesh_shape:[2],dims_mappings:[0,-1]>
    (%4) = "pd_op.matmul" (%2, %3) {op_dist_attr:{mesh:{shape:[2],process_ids:[0,1]},operand(0):{dims_maping:[-1,-1,-1]},operand(1):{dims_maping:[0,-1]},result(0):{dims_maping:[-1,-1,-1]}},stop_gradient:[false],transpose_x:false,transpose_y:false} : (pd_dist.tensor<2x4x8xf32, mesh_shape:[2],dims_mappings:[-1,-1,-1]>, pd_dist.tensor<8x8xf32, mesh_shape:[2],dims_mappings:[0,-1]>) -> pd_dist.tensor<2x4x8xf32, mesh_shape:[2],dims_mappings:[-1,-1,-1]>
}
