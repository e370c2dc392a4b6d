#pragma once
#include <stdexcept>
namespace ckpt {
/// The input is not what its format promises; what() is one sentence a user can act on.
class FormatError : public std::runtime_error { public: using std::runtime_error::runtime_error; };
/// The input exceeds a safety limit (nesting, size, count).
class LimitError : public FormatError { public: using FormatError::FormatError; };
}

namespace ckpt {
/// The caller asked to stop (progress callback returned false).
class CancelledError : public std::runtime_error {
public:
    CancelledError() : std::runtime_error("cancelled") {}
};
}
