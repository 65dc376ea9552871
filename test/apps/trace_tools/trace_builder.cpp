#include "test/apps/trace_tools/trace_builder.hpp"

namespace flint::trace_test {

trace_builder slot_protocol_trace() {
  trace_builder b;
  b.ask(te, rm, "register_task_executor");
  b.ask(te, rm, "send_slot_report");
  b.ask(job, rm, "register_job_manager");
  b.ask(pool, rm, "request_slot");
  b.ask(rm, te, "request_slot");
  b.ask(te, job, "register_task_manager");
  b.ask(te, job, "offer_slots");
  b.tell(rm, te, "heartbeat_from_resource_manager");
  b.ask(job, te, "submit_task");
  return b;
}

} // namespace flint::trace_test
