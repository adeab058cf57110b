// Communication ops: c_allreduce_*, c_allgather, c_reducescatter, c_broadcast, the
// tensor-parallel c_identity / c_split / c_concat, barrier, send_v2 / recv_v2 and the c_sync_*
// stream ops, in either style (TranslateOptions::comm_ops): the new IR's collectives
// (pd_op.all_reduce {reduce_type}, p_send, p_recv, ...; c_sync_* dropped) or Paddle's legacy names
// under pd_op. Every ring_id is checked against the bundle's process groups when given.
#pragma once

#include "common/status.h"

namespace irm::translator {

class OpContext;

Status TranslateAllReduce(OpContext& ctx);
// Ops whose new twin takes the same slots and attributes in either style (the name differs):
// c_allgather, c_reducescatter, c_broadcast, c_identity, c_split, c_concat, barrier, send_v2
// (p_send), recv_v2 (p_recv, its shape in the result type).
Status TranslateCollective(OpContext& ctx);
Status TranslateSyncStream(OpContext& ctx);

}  // namespace irm::translator
