// NDArray storage and the DLPack view of tessera dtypes.
#include "tessera/runtime/ndarray.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "tessera/runtime/cuda/cuda_driver.h"
#include "tessera/support/error.h"

namespace tessera {
namespace runtime {

TesseraDLDataType ToDLDataType(DataType t) {
  TesseraDLDataType d;
  switch (t.code()) {
    case DataType::kInt:
      d.code = TESSERA_DL_INT;
      break;
    case DataType::kUInt:
      d.code = TESSERA_DL_UINT;
      break;
    case DataType::kFloat:
      d.code = TESSERA_DL_FLOAT;
      break;
    case DataType::kBFloat:
      d.code = TESSERA_DL_BFLOAT;
      break;
    case DataType::kBool:
      d.code = TESSERA_DL_BOOL;
      break;
    default:
      // float8 formats: one byte each, under the DLPack code tessera numbers them with.
      if (t.is_float8()) {
        d.code = static_cast<uint8_t>(t.code());
        break;
      }
      TESSERA_THROW_KIND(Span(), ErrorKind::kType) << "arrays of " << t << " are not supported";
  }
  d.bits = static_cast<uint8_t>(t.is_bool() ? 8 : t.bits());
  d.lanes = static_cast<uint16_t>(t.lanes());
  return d;
}

int64_t StorageBytes(DataType t) { return t.is_bool() ? t.lanes() : t.bytes(); }

NDArray::Container::~Container() {
  if (base) return;  // a view: the base frees the memory
  if (device.device_type == TESSERA_DEVICE_CUDA) {
    cuda::DeviceFree(device.device_id, data);
  } else {
    std::free(data);
  }
}

void NDArray::CopyFromHost(const void* src, int64_t nbytes) {
  if (nbytes != this->nbytes()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "copy size does not match the array";
  }
  if (nbytes == 0) return;
  if (device().device_type == TESSERA_DEVICE_CUDA) {
    cuda::CopyHostToDevice(device().device_id, data(), src, size_t(nbytes));
  } else {
    std::memcpy(data(), src, size_t(nbytes));
  }
}

void NDArray::CopyToHost(void* dst, int64_t nbytes) const {
  if (nbytes != this->nbytes()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "copy size does not match the array";
  }
  if (nbytes == 0) return;
  if (device().device_type == TESSERA_DEVICE_CUDA) {
    cuda::CopyDeviceToHost(device().device_id, dst, data(), size_t(nbytes));
  } else {
    std::memcpy(dst, data(), size_t(nbytes));
  }
}

int64_t NDArray::size() const {
  int64_t n = 1;
  for (int64_t d : c_->shape) n *= d;
  return n;
}

NDArray NDArray::Empty(std::vector<int64_t> shape, DataType dtype, Device device) {
  if (device.device_type != TESSERA_DEVICE_CPU && device.device_type != TESSERA_DEVICE_CUDA) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "arrays on device type " << device.device_type
        << " are not supported; use ts.cpu(0) or ts.cuda(0)";
  }
  for (int64_t d : shape) {
    if (d < 0) TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "array dimensions must be >= 0";
  }
  NDArray a;
  a.c_ = std::make_shared<Container>();
  a.c_->shape = std::move(shape);
  a.c_->dtype = dtype;
  a.c_->device = device;
  size_t bytes = static_cast<size_t>(a.nbytes());
  if (device.device_type == TESSERA_DEVICE_CUDA) {
    a.c_->data = cuda::DeviceAlloc(device.device_id, bytes);
  } else {
    // Round up: aligned_alloc wants a multiple of the alignment.
    size_t padded = (bytes + 63) / 64 * 64;
    a.c_->data = std::aligned_alloc(64, padded == 0 ? 64 : padded);
  }
  if (a.c_->data == nullptr) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
        << "out of memory allocating " << bytes << " bytes";
  }
  TesseraDLTensor& t = a.c_->tensor;
  t.data = a.c_->data;
  t.device = {device.device_type, device.device_id};
  t.ndim = static_cast<int32_t>(a.c_->shape.size());
  t.dtype = ToDLDataType(dtype);
  t.shape = a.c_->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  return a;
}

NDArray NDArray::CreateView(std::vector<int64_t> shape, DataType dtype,
                             int64_t relative_byte_offset) const {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "view dimensions must be >= 0";
    count *= d;
  }
  if (relative_byte_offset < 0) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "a view cannot start before its array (relative_byte_offset " << relative_byte_offset
        << ")";
  }
  int64_t view_bytes = count * StorageBytes(dtype);
  int64_t have = nbytes();
  if (relative_byte_offset + view_bytes > have) {
    std::ostringstream dims;
    for (size_t i = 0; i < shape.size(); ++i) dims << (i ? ", " : "") << shape[i];
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "a view of shape [" << dims.str() << "] and dtype " << dtype << " needs "
        << view_bytes << " bytes and would occupy bytes " << relative_byte_offset
        << " <= i_byte < " << relative_byte_offset + view_bytes
        << " of the array it views, but the Tensor being viewed only contains " << have
        << " bytes";
  }
  NDArray v;
  v.c_ = std::make_shared<Container>();
  v.c_->shape = std::move(shape);
  v.c_->dtype = dtype;
  v.c_->device = c_->device;
  v.c_->data = c_->data;
  v.c_->byte_offset = c_->byte_offset + relative_byte_offset;
  v.c_->base = c_->base ? c_->base : c_;
  TesseraDLTensor& t = v.c_->tensor;
  t.data = v.c_->data;
  t.device = {v.c_->device.device_type, v.c_->device.device_id};
  t.ndim = static_cast<int32_t>(v.c_->shape.size());
  t.dtype = ToDLDataType(dtype);
  t.shape = v.c_->shape.data();
  t.strides = nullptr;
  t.byte_offset = static_cast<uint64_t>(v.c_->byte_offset);
  return v;
}

}  // namespace runtime
}  // namespace tessera
