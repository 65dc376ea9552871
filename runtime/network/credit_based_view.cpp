#include "runtime/network/credit_based_view.hpp"

#include <stdexcept>
#include <utility>

namespace flint::network {

credit_based_view::credit_based_view(input_channel_id channel,
                                     std::unique_ptr<result_subpartition_view> view,
                                     std::size_t initial_credit)
  : channel_(channel),
    view_(std::move(view)),
    credits_(initial_credit) {}

void credit_based_view::add_credit(std::size_t credit) {
  credits_ += credit;
}

void credit_based_view::on_add_credit(const network::add_credit& message) {
  if (message.channel == channel_)
    add_credit(message.credit);
}

bool credit_based_view::is_available() const {
  return view_ && view_->is_available(credits_);
}

std::optional<buffer_response> credit_based_view::next_response() {
  if (!is_available())
    return std::nullopt;
  auto next = view_->get_next_buffer();
  if (!next)
    return std::nullopt;
  if (next->buf.is_data()) {
    // is_available checked the head and only this reader takes from the view, so the head
    // cannot have changed into a data buffer without credit.
    if (credits_ == 0)
      throw std::logic_error("credit_based_view: sending a data buffer without credit");
    --credits_;
    ++data_sent_;
  }
  if (next->buf.kind() == buffer_kind::end_of_partition)
    finished_ = true;
  return buffer_response{channel_, std::move(next->buf), next->backlog, sequence_++};
}

void credit_based_view::release() {
  if (view_)
    view_->release_all_resources();
  view_.reset();
}

} // namespace flint::network
