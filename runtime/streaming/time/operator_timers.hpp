#pragma once
/// A keyed operator's timers as its task drives them (the scheduling half of Flink's
/// InternalTimeServiceManager): event-time timers fire when a watermark reaches the operator,
/// processing-time timers when the task's processing time reaches them, both on the task's
/// thread between records. The timers themselves are checkpointed with the operator's keyed
/// state (internal_timer_service), so they are restored and rescaled with it; after a restore
/// the processing-time timers that came due while the job was down fire at once.

#include "runtime/streaming/keyed_backend_holder.hpp"
#include "runtime/streaming/time/processing_time_service.hpp"
#include "runtime/streaming/time/timer_service.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace flint::streaming {

class operator_timers {
public:
  using on_timer = internal_timer_service::on_timer;

  operator_timers(keyed_backend_holder& backend, std::string name, state::key_group_range range,
                  processing_time_service* processing_time)
    : backend_(backend),
      name_(std::move(name)),
      range_(range),
      processing_time_(processing_time) {}

  /// What fires: `event` for event-time timers, `processing` for processing-time ones.
  void set_handlers(on_timer event, on_timer processing) {
    on_event_ = std::move(event);
    on_processing_ = std::move(processing);
  }

  /// After the backend restored (or started empty): the index from the backend, and the next
  /// processing-time wake-up.
  void open() {
    service().restore();
    if (auto next = service().next_processing_time())
      schedule(*next);
  }

  internal_timer_service& service() {
    if (!service_)
      service_.emplace(backend_.get(), name_, range_);
    return *service_;
  }

  void register_event_time_timer(std::int32_t key_group, std::string_view key,
                                 std::string_view ns, std::int64_t time) {
    service().register_event_time_timer(key_group, key, ns, time);
  }
  void delete_event_time_timer(std::int32_t key_group, std::string_view key, std::string_view ns,
                               std::int64_t time) {
    service().delete_event_time_timer(key_group, key, ns, time);
  }
  void register_processing_time_timer(std::int32_t key_group, std::string_view key,
                                      std::string_view ns, std::int64_t time) {
    if (service().register_processing_time_timer(key_group, key, ns, time))
      schedule(time);
  }
  void delete_processing_time_timer(std::int32_t key_group, std::string_view key,
                                    std::string_view ns, std::int64_t time) {
    service().delete_processing_time_timer(key_group, key, ns, time);
  }

  /// Fires the event-time timers at or before `watermark`.
  void advance_watermark(std::int64_t watermark) {
    service().advance_watermark(watermark, on_event_);
  }
  std::int64_t current_watermark() const {
    return service_ ? service_->current_watermark() : internal_timer_service::no_watermark;
  }
  std::int64_t current_processing_time() const {
    return processing_time_ ? processing_time_->current_processing_time() : 0;
  }

private:
  void schedule(std::int64_t time) {
    if (!processing_time_ || (scheduled_ && *scheduled_ <= time))
      return;
    scheduled_ = time;
    processing_time_->register_timer(time, [this](std::int64_t now) {
      // A wake-up overtaken by an earlier one finds nothing due; it only re-arms.
      scheduled_.reset();
      service().advance_processing_time(now, on_processing_);
      if (auto next = service().next_processing_time())
        schedule(*next);
    });
  }

  keyed_backend_holder& backend_;
  std::string name_;
  state::key_group_range range_;
  processing_time_service* processing_time_;
  std::optional<internal_timer_service> service_;
  std::optional<std::int64_t> scheduled_;
  on_timer on_event_;
  on_timer on_processing_;
};

} // namespace flint::streaming
