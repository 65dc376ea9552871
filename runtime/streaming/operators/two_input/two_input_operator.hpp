#pragma once
/// An operator with two inputs (Flink's TwoInputStreamOperator): the head of its task, fed by the
/// task from the gates of input 1 and input 2. Its watermark is the minimum over the channels of
/// both inputs (the task's valve spans them), and a checkpoint barrier is aligned across both.

#include "runtime/streaming/operator_api.hpp"

#include <optional>
#include <span>
#include <type_traits>

namespace flint::streaming {

template <class In1, class In2>
class two_input_operator : public stream_operator, public serialized_two_input {
public:
  virtual void process_element1(const In1& value) = 0;
  virtual void process_element2(const In2& value) = 0;

  void process_serialized1(std::span<const char> record) override {
    read_and_process(record, scratch1_, [this](const In1& v) { process_element1(v); });
  }
  void process_serialized2(std::span<const char> record) override {
    read_and_process(record, scratch2_, [this](const In2& v) { process_element2(v); });
  }

private:
  template <class T, class F>
  static void read_and_process(std::span<const char> record, std::optional<T>& scratch, F&& f) {
    byte_reader in(record);
    if constexpr (std::is_default_constructible_v<T>) {
      if (!scratch)
        scratch.emplace();
      type_serializer<T>::read_into(in, *scratch);
      f(*scratch);
    } else {
      T value = type_serializer<T>::read(in);
      f(value);
    }
  }

  std::optional<In1> scratch1_;
  std::optional<In2> scratch2_;
};

} // namespace flint::streaming
