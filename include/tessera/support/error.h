// Exceptions: user-facing errors with source spans, and internal invariant failures.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

#include "tessera/support/span.h"

namespace tessera {

/*! \brief Which Python exception a user error becomes. */
enum class ErrorKind { kDiagnostic, kType, kValue, kRuntime, kAttribute, kSchedule, kBuild };

/*! \brief A user error. With a span, what() renders file:line, the source line and a caret. */
class Error : public std::runtime_error {
 public:
  Error(std::string message, Span span = {}, ErrorKind kind = ErrorKind::kDiagnostic);
  const std::string& message() const { return message_; }
  const Span& span() const { return span_; }
  ErrorKind kind() const { return kind_; }

 private:
  std::string message_;
  Span span_;
  ErrorKind kind_;
};

/*! \brief A broken invariant inside tessera: a bug, reported as an exception, never an abort. */
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what) : std::logic_error(what) {}
};

namespace detail {
/*! \brief Collects a message with operator<< and throws when destroyed. */
template <class E>
class Thrower {
 public:
  explicit Thrower(Span span = {}, ErrorKind kind = ErrorKind::kDiagnostic)
      : span_(std::move(span)), kind_(kind) {}
  template <class T>
  Thrower& operator<<(const T& v) {
    os_ << v;
    return *this;
  }
  [[noreturn]] ~Thrower() noexcept(false) {
    if constexpr (std::is_same_v<E, InternalError>) {
      throw InternalError(os_.str());
    } else {
      throw E(os_.str(), span_, kind_);
    }
  }

 private:
  std::ostringstream os_;
  Span span_;
  ErrorKind kind_;
};
}  // namespace detail

}  // namespace tessera

/*! \brief Throw a user error at a span: TESSERA_THROW(span) << "message"; */
#define TESSERA_THROW(span) ::tessera::detail::Thrower<::tessera::Error>(span)
#define TESSERA_THROW_KIND(span, kind) ::tessera::detail::Thrower<::tessera::Error>(span, kind)
/*! \brief Check an internal invariant; failure throws InternalError naming the condition. */
#define TESSERA_ICHECK(cond)                                                   \
  if (cond) {                                                                  \
  } else                                                                       \
    ::tessera::detail::Thrower<::tessera::InternalError>()                       \
      << "InternalError: " << __FILE__ << ":" << __LINE__ << ": check failed: " \
      << #cond << ": "
