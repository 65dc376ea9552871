#include "runtime/network/checkpoint_barrier_handler.hpp"

#include <algorithm>

namespace flint::network {

// -- barrier_aligner ------------------------------------------------------------------------------

barrier_aligner::barrier_aligner(std::size_t channels)
  : blocked_(channels, false),
    ended_(channels, false) {}

std::size_t barrier_aligner::number_of_blocked() const {
  return static_cast<std::size_t>(std::count(blocked_.begin(), blocked_.end(), true));
}

bool barrier_aligner::all_live_blocked() const {
  for (std::size_t i = 0; i < blocked_.size(); ++i)
    if (!ended_[i] && !blocked_[i])
      return false;
  return true;
}

barrier_decision barrier_aligner::release_all() {
  barrier_decision d;
  for (std::size_t i = 0; i < blocked_.size(); ++i)
    if (blocked_[i]) {
      blocked_[i] = false;
      d.release.push_back(i);
    }
  return d;
}

barrier_decision barrier_aligner::on_barrier(std::size_t channel,
                                             const checkpoint_barrier& barrier) {
  if (channel >= blocked_.size() || ended_[channel] || barrier.id <= last_finished_)
    return {}; // late: that checkpoint completed or was given up here
  barrier_decision d;
  if (aligning_ && barrier.id < *aligning_)
    return {}; // older than the alignment in progress: it was given up already
  if (aligning_ && barrier.id > *aligning_) {
    // A newer checkpoint overtook the one being aligned: that one cannot complete any more.
    d = release_all();
    d.aborted = *aligning_;
    last_finished_ = *aligning_;
    aligning_.reset();
  }
  if (!aligning_) {
    aligning_ = barrier.id;
    barrier_ = barrier;
  }
  blocked_[channel] = true;
  d.block_channel = true;
  if (all_live_blocked()) {
    auto released = release_all();
    d.release.insert(d.release.end(), released.release.begin(), released.release.end());
    d.block_channel = false;
    d.trigger = barrier_;
    last_finished_ = barrier_.id;
    aligning_.reset();
  }
  return d;
}

barrier_decision barrier_aligner::on_cancellation(std::int64_t checkpoint_id) {
  if (checkpoint_id <= last_finished_)
    return {};
  if (aligning_ && checkpoint_id < *aligning_)
    return {};
  barrier_decision d;
  if (aligning_) {
    // The alignment in progress ends: it is the cancelled one, or older and so cannot finish
    // after a newer checkpoint was given up (Flink aborts it alike).
    d = release_all();
    d.aborted = *aligning_;
    aligning_.reset();
  }
  // A cancellation ahead of its barriers: those barriers come late now.
  last_finished_ = std::max(last_finished_, checkpoint_id);
  return d;
}

barrier_decision barrier_aligner::on_end_of_partition(std::size_t channel) {
  if (channel >= ended_.size() || ended_[channel])
    return {};
  ended_[channel] = true;
  blocked_[channel] = false;
  if (!aligning_ || !all_live_blocked())
    return {};
  // The channels still running all delivered the barrier: the alignment is complete.
  auto d = release_all();
  d.trigger = barrier_;
  last_finished_ = barrier_.id;
  aligning_.reset();
  return d;
}

// -- barrier_tracker ------------------------------------------------------------------------------

barrier_tracker::barrier_tracker(std::size_t channels) : ended_(channels, false) {}

std::optional<checkpoint_barrier> barrier_tracker::complete_if_seen_everywhere(in_flight& f) const {
  for (std::size_t i = 0; i < ended_.size(); ++i)
    if (!ended_[i] && !f.seen[i])
      return std::nullopt;
  return f.barrier;
}

barrier_decision barrier_tracker::on_barrier(std::size_t channel,
                                             const checkpoint_barrier& barrier) {
  if (channel >= ended_.size() || ended_[channel] || barrier.id <= last_finished_)
    return {};
  auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                         [&](const in_flight& f) { return f.barrier.id == barrier.id; });
  if (it == in_flight_.end()) {
    in_flight_.push_back({barrier, std::vector<bool>(ended_.size(), false)});
    std::sort(in_flight_.begin(), in_flight_.end(),
              [](const in_flight& a, const in_flight& b) { return a.barrier.id < b.barrier.id; });
    it = std::find_if(in_flight_.begin(), in_flight_.end(),
                      [&](const in_flight& f) { return f.barrier.id == barrier.id; });
  }
  it->seen[channel] = true;
  barrier_decision d;
  if (auto done = complete_if_seen_everywhere(*it)) {
    d.trigger = *done;
    // Checkpoints older than a completed one cannot complete after it (Flink's tracker drops
    // them): the newest complete checkpoint subsumes them.
    auto id = done->id;
    for (const auto& f : in_flight_)
      if (f.barrier.id < id)
        d.aborted = f.barrier.id; // the newest of them is reported; all are dropped
    std::erase_if(in_flight_, [&](const in_flight& f) { return f.barrier.id <= id; });
    last_finished_ = id;
  }
  return d;
}

barrier_decision barrier_tracker::on_cancellation(std::int64_t checkpoint_id) {
  auto before = in_flight_.size();
  std::erase_if(in_flight_, [&](const in_flight& f) { return f.barrier.id == checkpoint_id; });
  barrier_decision d;
  if (in_flight_.size() != before)
    d.aborted = checkpoint_id;
  return d;
}

barrier_decision barrier_tracker::on_end_of_partition(std::size_t channel) {
  if (channel >= ended_.size() || ended_[channel])
    return {};
  ended_[channel] = true;
  barrier_decision d;
  for (auto& f : in_flight_)
    if (auto done = complete_if_seen_everywhere(f))
      d.trigger = *done; // the newest complete one wins
  if (d.trigger) {
    auto id = d.trigger->id;
    std::erase_if(in_flight_, [&](const in_flight& f) { return f.barrier.id <= id; });
    last_finished_ = id;
  }
  return d;
}

} // namespace flint::network
