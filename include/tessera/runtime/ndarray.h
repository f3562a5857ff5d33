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
  /*! \brief Uninitialised storage on the CPU or a CUDA GPU. Throws tessera::Error. */
  static NDArray Empty(std::vector<int64_t> shape, DataType dtype, Device device);

  const std::vector<int64_t>& shape() const { return c_->shape; }
  DataType dtype() const { return c_->dtype; }
  Device device() const { return c_->device; }
  /*! \brief The first byte of this array (the allocation plus the byte offset of a view). */
  void* data() const { return static_cast<char*>(c_->data) + c_->byte_offset; }
  /*! \brief Bytes from the start of the backing allocation to this array's first element. */
  int64_t byte_offset() const { return c_->byte_offset; }
  /*! \brief A view of the same memory with another shape and dtype, `relative_byte_offset`
   *  bytes into this array; it keeps the memory alive. A view that does not fit inside this
   *  array throws tessera::Error (kValue) with the bytes it would cover. */
  NDArray CreateView(std::vector<int64_t> shape, DataType dtype,
                     int64_t relative_byte_offset) const;
  int64_t size() const;
  int64_t nbytes() const { return size() * StorageBytes(c_->dtype); }
  /*! \brief Copy `nbytes` (the array's size) from host memory in, or out to host memory;
   *  CUDA arrays copy through the driver. Throws tessera::Error. */
  void CopyFromHost(const void* src, int64_t nbytes);
  void CopyToHost(void* dst, int64_t nbytes) const;
  /*! \brief The descriptor passed to packed functions (valid while this array lives). */
  TesseraDLTensor* dltensor() const { return &c_->tensor; }

 private:
  struct Container {
    std::vector<int64_t> shape;
    DataType dtype;
    Device device;
    void* data = nullptr;  // the allocation (a view's is its base's)
    int64_t byte_offset = 0;
    std::shared_ptr<Container> base;  // set for a view: the array that owns `data`
    TesseraDLTensor tensor{};
    ~Container();
  };
  std::shared_ptr<Container> c_;
};

}  // namespace runtime
}  // namespace tessera
