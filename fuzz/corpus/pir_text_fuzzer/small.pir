{
    (%0) = "builtin.parameter" () {parameter_name:"w"} : () -> builtin.tensor<4x8xf32>
    (%1) = "pd_op.relu" (%0) {stop_gradient:[false]} : (builtin.tensor<4x8xf32>) -> builtin.tensor<4x8xf32>
    () = "builtin.shadow_output" (%1) {output_name:"out"} : (builtin.tensor<4x8xf32>) -> 
}
