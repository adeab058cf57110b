{
    ^%arg_0 {} : builtin.tensor<10xf32>
    (%0) = "test.c" () {} : () -> builtin.tensor<1xb>
    () = "test.odd" () {} : () -> 
    {
        ^%arg_1 {} : builtin.tensor<4xf32>, %arg_2 {} : builtin.tensor<5xf32>
        ^kw:
            %kwarg_k {} : builtin.tensor<7xf32>
        () = "test.use" (%arg_2, %arg_0) {} : (builtin.tensor<5xf32>, builtin.tensor<10xf32>) -> 
    }

    (%1) = "test.empty" () {} : () -> builtin.tensor<2xf32 NHWC, lod:[[0,1,2]], offset:4> [regions:0,2]
    {
        () = "test.x" () {} : () -> 
    }
    {
        () = "test.y" (%arg_3 {a:(Int64)1}) {} : (pd_op.selectedrows<3x4xf64 NDHWC, offset:1>) -> 
    }

    (%2) = "pd_op.while" (cond=%0, inputs=%1) {stop_gradient:[false]} { 
    ^%arg_4 {} : builtin.tensor<-1xf32>
        () = "cf.yield" (%0, %1) {} : (builtin.tensor<1xb>, builtin.tensor<2xf32 NHWC, lod:[[0,1,2]], offset:4>) -> 
    }
    () = "test.attrs" () {a:(pd_dist.ProcessMesh){mesh_shape:[2],process_ids:[0,1]},dim_names:["x"],s:(pd_op.Scalar:int64)2.0,t:pd_op.tensor_array<-1x3xi64>,u:pd_dist.tensor<7xf32, mesh_shape:[2],process_ids:[0,1],dim_names:["dp"],dims_mappings:[-1], partial(0,SUM)>,v:"C:\\dir"} : () -> 
}
