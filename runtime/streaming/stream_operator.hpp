#pragma once
/// The lifecycle every runtime operator shares (Flink's StreamOperator), small enough for the
/// graph layer's operator factories to name as their product.

namespace flint::streaming {

struct operator_context;

/// One operator of a task's chain. The task opens the chain tail first, calls `finish` head
/// first once every input ended, and closes it at the end, on the task's thread only.
class stream_operator {
public:
  virtual ~stream_operator() = default;
  /// Before the first record (files, sockets, state).
  virtual void open() {}
  /// Every input has ended (Flink's endInput + finish): emit what is held back.
  virtual void finish() {}
  /// After the task's last step; also on failure and cancellation.
  virtual void close() {}
  /// The task ends a mailbox turn: a chance to hand buffered output on (print sinks).
  virtual void end_of_batch() {}
};

} // namespace flint::streaming
