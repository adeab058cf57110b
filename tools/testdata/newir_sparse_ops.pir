{
    (%0) = "pd_op.data" () {dtype:(pd_op.DataType)float32,name:"x",place:(pd_op.Place)Place(cpu),shape:(pd_op.IntArray)[4,4],stop_gradient:[true]} : () -> builtin.tensor<4x4xf32>
    (%1) = "pd_op.dense_to_coo_sp" (%0) {sparse_dim:(Int64)2,stop_gradient:[true]} : (builtin.tensor<4x4xf32>) -> pd_op.sparsecootensor<4x4xf32>
    (%2) = "pd_op.add_coo_coo_sp" (%1, %1) {stop_gradient:[true]} : (pd_op.sparsecootensor<4x4xf32>, pd_op.sparsecootensor<4x4xf32>) -> pd_op.sparsecootensor<4x4xf32, non_zero_dims:[-1], indices:builtin.tensor<2x-1xi64>, elements:builtin.tensor<-1xf32>, coalesced:true>
    (%3) = "pd_op.values_coo_sp" (%2) {stop_gradient:[true]} : (pd_op.sparsecootensor<4x4xf32, non_zero_dims:[-1], indices:builtin.tensor<2x-1xi64>, elements:builtin.tensor<-1xf32>, coalesced:true>) -> builtin.tensor<-1xf32>
    (%4) = "pd_op.dense_to_csr_sp" (%0) {stop_gradient:[true]} : (builtin.tensor<4x4xf32>) -> pd_op.sparsecsrtensor<4x4xf32, crows:builtin.tensor<5xi64>, cols:builtin.tensor<-1xi64>, elements:builtin.tensor<-1xf32>>
    () = "builtin.shadow_output" (%3) {output_name:"out"} : (builtin.tensor<-1xf32>) -> 
}
