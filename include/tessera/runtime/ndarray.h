// NDArray: an owned, compact tensor in host memory, described by a DLTensor for packed calls.
#pragma once

#include <memory>
#include <vector>

#include "tessera/ir/dtype.h"
#include "tessera/runtime_abi.h"

namespace tessera {
namespace runtime {

/*! \brief A device: DLPack device type (1 CPU, 2 CUDA) and index. */
struct Device {
  int device_type = TESSERA_DEVICE_CPU;
  int device_id = 0;
};

/*! \brief The DLPack description of a tessera dtype (bool is one byte, code 6). */
TesseraDLDataType ToDLDataType(DataType t);
/*! \brief Bytes per element as stored in memory. */
int64_t StorageBytes(DataType t);

/*! \brief A tensor that owns 64-byte-aligned memory. Copies share the storage. */
class NDArray {
 public:
  /*! \brief Uninitialised storage; only CPU devices are supported. Throws tessera::Error. */
  static NDArray Empty(std::vector<int64_t> shape, DataType dtype, Device device);

  const std::vector<int64_t>& shape() const { return c_->shape; }
  DataType dtype() const { return c_->dtype; }
  Device device() const { return c_->device; }
  void* data() const { return c_->data; }
  int64_t size() const;
  int64_t nbytes() const { return size() * StorageBytes(c_->dtype); }
  /*! \brief The descriptor passed to packed functions (valid while this array lives). */
  TesseraDLTensor* dltensor() const { return &c_->tensor; }

 private:
  struct Container {
    std::vector<int64_t> shape;
    DataType dtype;
    Device device;
    void* data = nullptr;
    TesseraDLTensor tensor{};
    ~Container();
  };
  std::shared_ptr<Container> c_;
};

}  // namespace runtime
}  // namespace tessera
