#include "runtime/actors/slot_pool/slot_pool.hpp"

#include "runtime/common/logging.hpp"

#include <caf/actor_clock.hpp>
#include <caf/event_based_actor.hpp>

#include <spdlog/spdlog.h>

#include "runtime/actors/resource_manager/resource_manager_gateway.hpp"
#include "runtime/actors/task_executor/task_executor_gateway.hpp"

namespace flint::slot_pool {

slot_pool::slot_pool(caf::actor_config& cfg, rpc::endpoint_context ctx, graph::job_id job,
                     cluster::job_master_id token, slot_pool_config config,
                     rpc::endpoint_directory* directory)
  : rpc::rpc_endpoint(cfg, std::move(ctx)),
    job_(job),
    initial_token_(token),
    config_(std::move(config)),
    directory_(directory),
    logger_(config_.logger ? config_.logger : make_endpoint_logger(endpoint_id())) {
  state_ = std::make_unique<slot_pool_state>(
    job_, slot_pool_settings{config_.slot_request_timeout, config_.slot_idle_timeout},
    static_cast<slot_pool_actions&>(*this), logger_,
    token.hi ^ (token.lo * 0x9e3779b97f4a7c15ULL) ^ job.lower());
}

slot_pool::~slot_pool() = default;

time_point slot_pool::now() const {
  return const_cast<slot_pool*>(this)->clock().now();
}

std::optional<rpc::gateway> slot_pool::task_executor(const std::string& address) const {
  if (directory_ == nullptr)
    return std::nullopt;
  auto handle = directory_->lookup(address);
  if (!handle)
    return std::nullopt;
  return rpc::gateway(*handle, address, token(), job_.to_string());
}

void slot_pool::on_start() {
  // The pool accepts calls of its JobMaster's leadership only.
  set_token(initial_token_);

  handle<connect_to_resource_manager>(
    rpc::fencing::fenced, [this](connect_to_resource_manager_request req) -> expected<rpc::ack> {
      auto handle =
        directory_ != nullptr ? directory_->lookup(req.resource_manager_address) : std::nullopt;
      if (!handle)
        return make_error(
          errc::not_found,
          "ResourceManager " + req.resource_manager_address + " is not in the endpoint directory");
      resource_manager_ =
        rpc::gateway(*handle, req.resource_manager_address, req.resource_manager_id);
      logger_->info("Connecting to ResourceManager " + req.resource_manager_address + " ("
                    + req.resource_manager_id.to_string() + ").");
      state_->connect_resource_manager();
      return rpc::ack{};
    });

  handle<disconnect_resource_manager>(rpc::fencing::fenced, [this](rpc::ack) -> expected<rpc::ack> {
    resource_manager_.reset();
    state_->disconnect_resource_manager();
    return rpc::ack{};
  });

  handle_async<allocate_slot>(
    rpc::fencing::fenced, [this](allocate_slot_request req, rpc::reply_to<allocated_slot> reply) {
      if (replies_.count(req.request_id) != 0) {
        reply(make_error(errc::invalid_argument,
                         "slot request " + to_string(req.request_id) + " is already being served"));
        return;
      }
      replies_.emplace(req.request_id, std::move(reply));
      auto generation = state_->allocate(req.request_id, req.profile, req.allow_queued, now());
      if (generation != 0) {
        auto id = req.request_id;
        schedule_run_async(
          [this, id, generation] { state_->check_request_timeout(id, generation); },
          config_.slot_request_timeout);
      }
    });

  handle<release_slot>(rpc::fencing::fenced,
                       [this](release_slot_request req) -> expected<rpc::ack> {
                         state_->release(req.request_id, req.cause, now());
                         return rpc::ack{};
                       });

  handle<register_task_manager>(rpc::fencing::fenced,
                                [this](register_task_manager_request req) -> expected<rpc::ack> {
                                  state_->register_task_manager(req.resource_id);
                                  return rpc::ack{};
                                });

  handle<release_task_manager>(rpc::fencing::fenced,
                               [this](release_task_manager_request req) -> expected<rpc::ack> {
                                 state_->release_task_manager(req.resource_id, req.cause, req.free_slots);
                                 return rpc::ack{};
                               });

  handle<offer_slots>(
    rpc::fencing::fenced,
    [this](offer_slots_request req) -> expected<job_master::offer_slots_response> {
      job_master::offer_slots_response resp;
      resp.accepted =
        state_->offer_slots(req.location, req.task_executor_address, req.offers, now());
      return resp;
    });

  handle<fail_allocation>(rpc::fencing::fenced,
                          [this](fail_allocation_request req) -> expected<rpc::ack> {
                            state_->fail_allocation(req.allocation_id, req.cause);
                            return rpc::ack{};
                          });

  handle<suspend>(rpc::fencing::fenced, [this](rpc::ack) -> expected<rpc::ack> {
    logger_->info("Suspending SlotPool.");
    resource_manager_.reset();
    state_->suspend();
    return rpc::ack{};
  });

  schedule_idle_check();
}

void slot_pool::schedule_idle_check() {
  schedule_run_async(
    [this] {
      state_->check_idle_slots(now());
      schedule_idle_check();
    },
    config_.slot_idle_timeout);
}

// -- slot_pool_actions ----------------------------------------------------------------------------

void slot_pool::request_slot_from_resource_manager(const slot_request_id& request,
                                                   const cluster::allocation_id& allocation,
                                                   const cluster::resource_profile& profile) {
  if (!resource_manager_) {
    state_->resource_manager_request_failed(
      request, allocation, make_error(errc::unreachable, "no ResourceManager connected"));
    return;
  }
  resource_manager::request_slot_request req;
  req.job_master_id = token();
  req.request =
    resource_manager::slot_request{job_, allocation, profile, config_.job_master_address};
  resource_manager_->ask<resource_manager::request_slot>(
    *this, req,
    [this, request, allocation](expected<rpc::ack> reply) {
      if (!reply)
        state_->resource_manager_request_failed(request, allocation, reply.error());
    },
    config_.rpc_timeout);
}

void slot_pool::cancel_slot_request_at_resource_manager(const cluster::allocation_id& allocation) {
  if (resource_manager_)
    resource_manager_->tell<resource_manager::cancel_slot_request>(
      *this, resource_manager::cancel_slot_request_request{allocation});
}

void slot_pool::free_slot_at_task_executor(const allocated_slot& slot, const std::string& cause) {
  auto te = task_executor(slot.task_executor_address);
  if (!te) {
    logger_->debug("Cannot free slot " + slot.allocation_id.to_string() + ": TaskExecutor "
                   + slot.task_executor_address + " is unknown.");
    return;
  }
  te->ask<task_executor::free_slot>(
    *this, task_executor::free_slot_request{job_, slot.allocation_id, cause},
    [this, slot](expected<rpc::ack> reply) {
      if (!reply)
        state_->free_slot_failed(slot, cluster::resource_profile{}, now());
    },
    config_.rpc_timeout);
}

void slot_pool::complete_request(const slot_request_id& request, expected<allocated_slot> result) {
  auto i = replies_.find(request);
  if (i == replies_.end())
    return;
  auto reply = std::move(i->second);
  replies_.erase(i);
  reply(std::move(result));
}

} // namespace flint::slot_pool
