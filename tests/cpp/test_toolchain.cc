// Host toolchain tests: compile DSL kernels against tessera/dsl.h, cache them, load and run them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/ir/function.h"
#include "tessera/runtime/dso_module.h"
#include "tessera/runtime_abi.h"
#include "tessera/support/error.h"
#include "tessera/support/hash.h"
#include "tessera/target/codegen_dsl.h"
#include "tessera/target/toolchain.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

Expr I32(int64_t v) { return IntImmNode::Make(DataType::Int(32), v); }

Buffer FlatBuffer(const Var& ptr) {
  return BufferNode::Make(ptr, ptr->pointer->element, {I32(2147483647)}, {}, nullptr, ptr->name);
}

// A kernel module as the front end builds it; `body` gets the parameters' buffers.
IRModule KernelModule(const std::string& name, std::vector<Var> params,
                      const std::function<Stmt(const std::vector<Buffer>&)>& body) {
  std::vector<Buffer> bufs;
  for (const Var& p : params) bufs.push_back(p->pointer ? FlatBuffer(p) : nullptr);
  Stmt s = body(bufs);
  for (size_t i = bufs.size(); i-- > 0;) {
    if (bufs[i]) s = DeclBufferNode::Make(bufs[i], s);
  }
  AttrMap attrs;
  attrs["global_symbol"] = StringImmNode::Make(name);
  attrs["tessera.is_entry"] = I32(1);
  PrimFunc f = PrimFuncNode::Make(std::move(params), {}, s, DataType::Void(), attrs);
  return IRModuleNode::FromFunc(f, name);
}

// Example 1 of the codegen tests: b[0:8] = a[0:8] + 1.
IRModule AddOneModule() {
  Var a = VarNode::MakePointer("a", DataType::Int(32), "global");
  Var b = VarNode::MakePointer("b", DataType::Int(32), "global");
  return KernelModule("func", {a, b}, [](const std::vector<Buffer>& buf) {
    Var va = VarNode::Make("va", DataType::Int(32, 8)),
        vb = VarNode::Make("vb", DataType::Int(32, 8));
    Expr ramp = RampNode::Make(I32(0), I32(1), 8);
    Stmt store = BufferStoreNode::Make(buf[1], vb, {ramp});
    return LetStmtNode::Make(
        va, BufferLoadNode::Make(buf[0], {ramp}),
        LetStmtNode::Make(vb, AddNode::Make(va, BroadcastNode::Make(I32(1), 8)), store));
  });
}

// The spec's `inc`: for i in range(n): b[i] = a[i] + 1.
IRModule IncModule() {
  Var a = VarNode::MakePointer("a", DataType::Int(32), "global");
  Var b = VarNode::MakePointer("b", DataType::Int(32), "global");
  Var n = VarNode::Make("n", DataType::Int(32));
  return KernelModule("inc", {a, b, n}, [&](const std::vector<Buffer>& buf) {
    Var i = VarNode::Make("i", DataType::Int(32));
    Stmt store = BufferStoreNode::Make(
        buf[1], AddNode::Make(BufferLoadNode::Make(buf[0], {i}), I32(1)), {i});
    return ForNode::Make(i, I32(0), n, ForKind::kSerial, store);
  });
}

// The package's include folder in the source tree (set by CMake for the test binary).
std::string FindIncludeDir() { return std::string(TESSERA_SOURCE_DIR) + "/python/tessera/include"; }

class Toolchain : public ::testing::Test {
 protected:
  void SetUp() override {
    include_dir_ = FindIncludeDir();
    ASSERT_TRUE(fs::exists(include_dir_ + "/tessera/dsl.h")) << "missing " << include_dir_;
    try {
      FindHostCompiler();
    } catch (const Error& e) {
      GTEST_SKIP() << e.what();
    }
    char templ[] = "/tmp/tessera-toolchain-test-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    cache_dir_ = templ;
  }
  void TearDown() override {
    std::error_code ec;
    if (!cache_dir_.empty()) fs::remove_all(cache_dir_, ec);
  }

  std::string Build(const std::string& source) {
    return CompileSharedLibrary(source, DefaultDSLCompileFlags(include_dir_), cache_dir_);
  }
  std::string BuildModule(const IRModule& mod, const std::string& entry) {
    return Build(CodeGenDSL(mod, entry) + CodeGenDSLLauncher(mod, entry));
  }

  std::string include_dir_, cache_dir_;
};

// One argument of a packed call: an int32 array of `size` elements, or the integer `value`.
struct Arg {
  int32_t* data = nullptr;
  int64_t size = 0, value = 0;
};
Arg Array(int32_t* data, int64_t size) { return {data, size, 0}; }
Arg Scalar(int64_t value) { return {nullptr, 0, value}; }

// Calls the packed entry point of kernel `name` as the runtime does: 0 on success, else the
// entry's code with its message in *message.
int32_t CallPacked(const DSOModule& lib, const std::string& name, const std::vector<Arg>& args,
                   std::string* message = nullptr) {
  size_t n = args.size();
  std::vector<TesseraDLTensor> tensors(n);
  std::vector<int64_t> shapes(n);
  std::vector<TesseraValue> values(n);
  std::vector<int32_t> codes(n);
  for (size_t i = 0; i < n; ++i) {
    if (args[i].data) {
      shapes[i] = args[i].size;
      tensors[i] = {args[i].data, {TESSERA_DEVICE_CPU, 0}, 1, {TESSERA_DL_INT, 32, 1},
                    &shapes[i], nullptr, 0};
      values[i].v_handle = &tensors[i];
      codes[i] = TESSERA_ARG_DLTENSOR;
    } else {
      values[i].v_int64 = args[i].value;
      codes[i] = TESSERA_ARG_INT;
    }
  }
  auto fn = reinterpret_cast<TesseraPackedFunc>(lib.GetFunction(TESSERA_PACKED_PREFIX + name));
  if (fn == nullptr) throw std::runtime_error("no packed entry for " + name);
  TesseraValue ret;
  int32_t ret_code = -1;
  int32_t rc = fn(values.data(), codes.data(), static_cast<int32_t>(n), &ret, &ret_code);
  if (rc != 0 && message != nullptr) {
    auto get = reinterpret_cast<const char* (*)()>(lib.GetFunction(TESSERA_LAST_ERROR_SYMBOL));
    *message = get ? get() : "";
  }
  if (rc == 0) {
    EXPECT_EQ(ret_code, TESSERA_ARG_NULL);
  }
  return rc;
}

TEST_F(Toolchain, CompilesLoadsAndRunsTheKernel) {
  std::string path = BuildModule(AddOneModule(), "func");
  EXPECT_EQ(fs::path(path).parent_path(), fs::path(cache_dir_));
  DSOModule lib(path);
  ASSERT_NE(lib.GetFunction("__tessera_packed_func"), nullptr);
  EXPECT_EQ(lib.GetFunction("no_such_symbol"), nullptr);

  int32_t a[8] = {0, 1, 2, 3, 4, 5, 6, 7}, b[8] = {0};
  EXPECT_EQ(CallPacked(lib, "func", {Array(a, 8), Array(b, 8)}), 0);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], i + 1) << "lane " << i;

  // The entry point checks its arguments and names the parameter.
  std::string message;
  EXPECT_EQ(CallPacked(lib, "func", {Array(a, 8)}, &message), TESSERA_RC_TYPE_ERROR);
  EXPECT_EQ(message, "func() takes 2 arguments (a, b) but 1 were given");
  EXPECT_EQ(CallPacked(lib, "func", {Array(a, 8), Array(b, 4)}, &message), TESSERA_RC_VALUE_ERROR);
  EXPECT_EQ(message, "argument 'b' of func() has 4 elements but the kernel accesses 8");
  EXPECT_EQ(CallPacked(lib, "func", {Scalar(3), Array(b, 8)}, &message), TESSERA_RC_TYPE_ERROR);
  EXPECT_EQ(message, "argument 'a' of func() must be a numpy array, got int");
  EXPECT_EQ(CallPacked(lib, "func", {Scalar(0), Array(b, 8)}, &message), TESSERA_RC_TYPE_ERROR);
  EXPECT_EQ(message,
            "argument 'a' of func() must be a numpy array, got 0: the kernel accesses 8 elements "
            "through it");
}

TEST_F(Toolchain, ScalarArgumentsAndLoops) {
  DSOModule lib(BuildModule(IncModule(), "inc"));
  int32_t a[10], b[11];
  for (int i = 0; i < 10; ++i) a[i] = 10 * i;
  for (int32_t& x : b) x = -1;
  EXPECT_EQ(CallPacked(lib, "inc", {Array(a, 10), Array(b, 11), Scalar(10)}), 0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(b[i], 10 * i + 1);
  EXPECT_EQ(b[10], -1);
}

TEST_F(Toolchain, SecondCompileHitsTheCache) {
  std::string source =
      CodeGenDSL(AddOneModule(), "func") + CodeGenDSLLauncher(AddOneModule(), "func");
  std::string first = Build(source);
  int64_t runs = CompilerInvocationCount();
  auto stamp = fs::last_write_time(first);
  EXPECT_EQ(Build(source), first);
  EXPECT_EQ(CompilerInvocationCount(), runs);
  EXPECT_EQ(fs::last_write_time(first), stamp);
  // Different flags are a different library.
  std::vector<std::string> flags = DefaultDSLCompileFlags(include_dir_);
  flags.push_back("-O1");
  EXPECT_NE(CompileSharedLibrary(source, flags, cache_dir_), first);
  EXPECT_EQ(CompilerInvocationCount(), runs + 1);
  // No temporary files are left behind.
  for (const auto& entry : fs::directory_iterator(cache_dir_)) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST_F(Toolchain, CompilerErrorsCarryTheCompilerOutput) {
  try {
    Build("#include <tessera/dsl.h>\nint broken( {\n");
    ADD_FAILURE() << "a syntax error compiled";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kBuild);
    EXPECT_NE(what.find("C compilation failed"), std::string::npos) << what;
    EXPECT_NE(what.find("command: "), std::string::npos) << what;
    EXPECT_NE(what.find("error"), std::string::npos) << what;
    EXPECT_NE(what.find(".c:2"), std::string::npos) << what;  // the compiler's own location
  }
}

TEST_F(Toolchain, MissingCompiler) {
  const char* old = std::getenv("CC");
  std::string saved = old ? old : "";
  setenv("CC", "/nonexistent", 1);
  try {
    Build("int f(void) { return 0; }\n");
    ADD_FAILURE() << "built without a compiler";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBuild);
    EXPECT_NE(std::string(e.what()).find("no C compiler found"), std::string::npos) << e.what();
  }
  if (old) {
    setenv("CC", saved.c_str(), 1);
  } else {
    unsetenv("CC");
  }
}

TEST(DSOModuleTest, LoadFailureIsARuntimeError) {
  try {
    DSOModule lib("/nonexistent/libnothing.so");
    ADD_FAILURE() << "loaded a missing library";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libnothing.so"), std::string::npos);
  }
}

// The packed entry point of a kernel with one int pointer parameter, around hand-written kernel code.
std::string WithLauncher(const std::string& kernel) {
  Var out = VarNode::MakePointer("out", DataType::Int(32), "global");
  IRModule sig = KernelModule(
      "k", {out}, [](const std::vector<Buffer>&) { return EvaluateNode::Make(I32(0)); });
  return "#include <tessera/dsl.h>\n" + kernel + CodeGenDSLLauncher(sig, "k");
}

TEST_F(Toolchain, TecsShareLocalMemoryAndSurviveEarlyReturn) {
  std::string path = Build(WithLauncher(R"(
__kernel void k(__global int* out) {
  static __local int slots[4];
  int t = get_local_id(0);
  slots[t] = 10 * (t + 1);
  barrier(CLK_LOCAL_MEM_FENCE);
  out[t] = slots[(t + 1) % 4];  /* written by another TEC before the barrier */
  if (t == 2) return;           /* must not leave the others at the final barrier */
  barrier(CLK_LOCAL_MEM_FENCE);
  out[4 + t] = get_local_size(0);
  barrier(CLK_LOCAL_MEM_FENCE);
}
)"));
  DSOModule lib(path);
  for (int round = 0; round < 20; ++round) {
    int32_t out[8];
    for (int32_t& x : out) x = -1;
    EXPECT_EQ(CallPacked(lib, "k", {Array(out, 8)}), 0);
    EXPECT_EQ(std::vector<int>(out, out + 8), (std::vector<int>{20, 30, 40, 10, 4, 4, -1, 4}));
  }
}

TEST_F(Toolchain, TecPoolIsReusedAndStoppedBeforeUnload) {
  // Each TEC counts its launches in a shared slot; the workers of the pool persist between
  // launches, and closing the library joins them (a parked worker in unmapped code would crash).
  std::string path = Build(WithLauncher(R"(
__kernel void k(__global int* out) {
  out[get_local_id(0)] += 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) out[4] = out[0] + out[1] + out[2] + out[3];
}
)"));
  for (int reload = 0; reload < 5; ++reload) {
    DSOModule lib(path);
    int32_t out[5] = {0, 0, 0, 0, 0};
    for (int i = 0; i < 50; ++i) EXPECT_EQ(CallPacked(lib, "k", {Array(out, 5)}), 0);
    EXPECT_EQ(std::vector<int>(out, out + 5), (std::vector<int>{50, 50, 50, 50, 200}));
  }
}

TEST_F(Toolchain, MaskedVectorSemantics) {
  std::string path = Build(WithLauncher(R"(
__kernel void k(__global int* out) {
  if (get_local_id(0) != 0) return;
  int src[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  /* Lanes 0-2 active: the rest read as zero; the store writes lanes 0-3 only. */
  int8 v = __vload((int8*)src, __vmov_w(0x00000FFF));
  __vstore(v, (__global int8*)out, __vmov_w(0x0000FFFF));
  /* Strided load of every other element. */
  __vstore(__vload_stride((int8*)(src + 1), 2, ALL_TRUE_w), (__global int8*)(out + 8), ALL_TRUE_w);
  /* Division by zero gives 0 and INT_MIN / -1 saturates. */
  int8 num = __vbcast((-2147483647 - 1));
  int8 den = __vload((int8*)src, ALL_TRUE_w);
  den[0] = 0;
  den[1] = -1;
  int8 q = __vdiv(num, den, ALL_TRUE_w);
  out[16] = q[0];
  out[17] = q[1];
  out[18] = q[2];
  /* Comparison masks and selection. */
  bool8 gt = __vcgt(den, __vbcast(4), ALL_TRUE_w);
  int8 sel = __vsel(den, __vbcast(0), gt);
  out[19] = sel[3] + sel[4] + sel[7];
  out[20] = (int)__vand(gt, __vinv(gt, ALL_TRUE_w), ALL_TRUE_w);
  /* Wrapping vector arithmetic and 16-bit lanes. */
  int8 w = __vadd(__vbcast(2147483647), __vbcast(1), ALL_TRUE_w);
  out[21] = w[5];
  short16 s = __vmul(__vbcast((short)300), __vbcast((short)3), ALL_TRUE_h);
  out[22] = s[15];
  out[23] = __floordiv(-7, 2) * 100 + __floormod(-7, 2) * 10 + min(3, max(-1, 2));
  /* half and bfloat16 lanes. */
#if defined(__FLT16_MAX__)
  half16 h = __vadd(__vbcast((half)1.5f), __vbcast((half)2.25f), ALL_TRUE_h);
  out[24] = (int)(h[7] * 4);
#else
  out[24] = 15; /* this compiler has no _Float16 */
#endif
  bfloat16 three = __bfloat16_from_float(3.0f), minus_half = __bfloat16_from_float(-0.5f);
  bfloat16x16 bf = __vmul(__vbcast(three), __vbcast(minus_half), ALL_TRUE_h);
  out[25] = (int)(__bfloat16_to_float((bfloat16){bf.bits[2]}) * 10);
  out[26] = (int)__vcge(bf, __vbcast(__bfloat16_from_float(-1.5f)), __vmov_h(0x0000000F));
}
)"));
  DSOModule lib(path);
  int32_t out[27];
  for (int32_t& x : out) x = -1;
  EXPECT_EQ(CallPacked(lib, "k", {Array(out, 27)}), 0);
  EXPECT_EQ(std::vector<int>(out, out + 8), (std::vector<int>{1, 2, 3, 0, -1, -1, -1, -1}));
  EXPECT_EQ(std::vector<int>(out + 8, out + 16), (std::vector<int>{2, 4, 6, 8, 10, 12, 14, 16}));
  EXPECT_EQ(out[16], 0);
  EXPECT_EQ(out[17], 2147483647);
  EXPECT_EQ(out[18], (-2147483647 - 1) / 3);
  EXPECT_EQ(out[19], 0 + 5 + 8);
  EXPECT_EQ(out[20], 0);
  EXPECT_EQ(out[21], -2147483647 - 1);
  EXPECT_EQ(out[22], 900);
  EXPECT_EQ(out[23], -4 * 100 + 1 * 10 + 2);
  EXPECT_EQ(out[24], 15);
  EXPECT_EQ(out[25], -15);
  EXPECT_EQ(out[26], 0xF);  // lanes 0 and 1 (two predicate bits each) are active and true
}

// The build of BuildManager: the kernel compiled with -DTESSERA_DSL_SPLIT, the support unit
// from the object cache, tessera/dsl.h from a precompiled header where the compiler has one.
// The tests that damage nothing share one cache folder, so that the support object and the
// precompiled header are built once for them.
class SplitToolchain : public Toolchain {
 protected:
  static void SetUpTestSuite() {
    char templ[] = "/tmp/tessera-split-test-XXXXXX";
    if (mkdtemp(templ) != nullptr) shared_dir_ = templ;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    if (!shared_dir_.empty()) fs::remove_all(shared_dir_, ec);
  }
  void UseSharedCache() {
    ASSERT_FALSE(shared_dir_.empty());
    std::error_code ec;
    fs::remove_all(cache_dir_, ec);
    cache_dir_.clear();
    shared_ = true;
  }
  void TearDown() override {
    if (!shared_) Toolchain::TearDown();
  }
  const std::string& Dir() const { return shared_ ? shared_dir_ : cache_dir_; }

  std::string BuildSplit(const std::string& source, std::vector<std::string> accelerators = {},
                         bool precompiled = true) {
    std::vector<std::string> flags = DefaultDSLCompileFlags(include_dir_);
    SharedLibraryExtras extras;
    extras.objects = {CompileCachedObject(DSLSupportUnit(), flags, Dir())};
    flags.push_back("-DTESSERA_DSL_SPLIT");
    if (precompiled) {
      std::string pch = PrecompiledHeaderDir(include_dir_, "compass/dsl.h", flags, Dir());
      if (!pch.empty()) accelerators.push_back("-I" + pch);
    }
    extras.accelerators = accelerators;
    return CompileSharedLibrary(source, flags, Dir(), "", extras);
  }

  static std::string shared_dir_;
  bool shared_ = false;
};
std::string SplitToolchain::shared_dir_;

TEST_F(SplitToolchain, KernelLinkedWithTheSupportObjectRunsAndChecksItsArguments) {
  UseSharedCache();
  std::string source =
      CodeGenDSL(AddOneModule(), "func") + CodeGenDSLLauncher(AddOneModule(), "func");
  DSOModule lib(BuildSplit(source));
  int32_t a[8] = {0, 1, 2, 3, 4, 5, 6, 7}, b[8] = {0};
  EXPECT_EQ(CallPacked(lib, "func", {Array(a, 8), Array(b, 8)}), 0);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], i + 1) << "lane " << i;
  // The checks and the error text live in the support object.
  std::string message;
  EXPECT_EQ(CallPacked(lib, "func", {Array(a, 8), Array(b, 4)}, &message), TESSERA_RC_VALUE_ERROR);
  EXPECT_EQ(message, "argument 'b' of func() has 4 elements but the kernel accesses 8");
  // Only the entry points are exported: the support symbols are hidden in each library.
  EXPECT_EQ(lib.GetFunction("__tessera_run_tecs"), nullptr);
  EXPECT_EQ(lib.GetFunction("__tessera_pool"), nullptr);
  EXPECT_NE(lib.GetFunction(TESSERA_LAST_ERROR_SYMBOL), nullptr);
  // The same build again runs no compiler: the object and the library are both cached.
  int64_t runs = CompilerInvocationCount();
  EXPECT_EQ(BuildSplit(source), lib.path());
  EXPECT_EQ(CompilerInvocationCount(), runs);
}

TEST_F(SplitToolchain, EachLibraryHasItsOwnPoolAndUnloadsCleanly) {
  // Two libraries linked with the same support object: each has its own TEC pool and shared
  // memory, and closing one joins its workers while the other keeps running.
  UseSharedCache();
  const char* kernel = R"(
__kernel void k(__global int* out) {
  static __local int count;
  if (get_local_id(0) == 0) count += %d;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_local_id(0)] = count;
}
)";
  char one[512], two[512];
  std::snprintf(one, sizeof one, kernel, 1);
  std::snprintf(two, sizeof two, kernel, 100);
  std::string path_one = BuildSplit(WithLauncher(one)), path_two = BuildSplit(WithLauncher(two));
  DSOModule lib_two(path_two);
  for (int reload = 0; reload < 3; ++reload) {
    DSOModule lib_one(path_one);
    int32_t out[4];
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(CallPacked(lib_one, "k", {Array(out, 4)}), 0);
      EXPECT_EQ(out[3], i + 1);
      EXPECT_EQ(CallPacked(lib_two, "k", {Array(out, 4)}), 0);
      EXPECT_EQ(out[2], 100 * (5 * reload + i + 1));
    }
  }
}

TEST_F(SplitToolchain, CorruptCachedObjectIsRebuilt) {
  std::vector<std::string> flags = DefaultDSLCompileFlags(include_dir_);
  std::string obj = CompileCachedObject(DSLSupportUnit(), flags, cache_dir_);
  int64_t runs = CompilerInvocationCount();
  EXPECT_EQ(CompileCachedObject(DSLSupportUnit(), flags, cache_dir_), obj);
  EXPECT_EQ(CompilerInvocationCount(), runs);
  {
    std::ofstream out(obj, std::ios::binary | std::ios::trunc);
    out << "not an object";
  }
  EXPECT_EQ(CompileCachedObject(DSLSupportUnit(), flags, cache_dir_), obj);
  EXPECT_EQ(CompilerInvocationCount(), runs + 1);
  EXPECT_GT(fs::file_size(obj), 1000u);
  // A compile error in the unit is a build error with the compiler's output.
  try {
    CompileCachedObject("int broken( {\n", flags, cache_dir_);
    ADD_FAILURE() << "a syntax error compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBuild);
    EXPECT_NE(std::string(e.what()).find("C compilation failed"), std::string::npos) << e.what();
  }
  for (const auto& entry : fs::directory_iterator(cache_dir_)) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST_F(SplitToolchain, AcceleratorsNeverChangeTheOutcome) {
  std::string source =
      CodeGenDSL(AddOneModule(), "func") + CodeGenDSLLauncher(AddOneModule(), "func");
  // An accelerator the compiler rejects costs a second compile, not an error.
  int64_t runs = CompilerInvocationCount();
  std::string path = BuildSplit(source, {"--tessera-no-such-flag"}, false);
  EXPECT_EQ(CompilerInvocationCount(), runs + 2);
  DSOModule lib(path);
  int32_t a[8] = {0, 1, 2, 3, 4, 5, 6, 7}, b[8] = {0};
  EXPECT_EQ(CallPacked(lib, "func", {Array(a, 8), Array(b, 8)}), 0);
  EXPECT_EQ(b[7], 8);
  // A damaged precompiled header is not used: the library still builds and runs.
  std::vector<std::string> flags = DefaultDSLCompileFlags(include_dir_);
  flags.push_back("-DTESSERA_DSL_SPLIT");
  std::string pch = PrecompiledHeaderDir(include_dir_, "tessera/dsl.h", flags, cache_dir_);
  if (pch.empty()) GTEST_SKIP() << "this compiler gets no precompiled header";
  std::string gch = pch + "/tessera/dsl.h.gch";
  ASSERT_TRUE(fs::is_regular_file(gch));
  std::string text;
  {
    std::ifstream in(gch, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  {
    std::ofstream out(gch, std::ios::binary | std::ios::trunc);
    out << text.substr(0, text.size() / 2);
  }
  DSOModule again(BuildSplit(source + "\n/* another library */\n", {"-I" + pch}, false));
  EXPECT_EQ(CallPacked(again, "func", {Array(a, 8), Array(b, 8)}), 0);
  EXPECT_EQ(b[0], 1);
  // The damaged header fails its digest check and is built again.
  EXPECT_EQ(PrecompiledHeaderDir(include_dir_, "tessera/dsl.h", flags, cache_dir_), pch);
  EXPECT_GT(fs::file_size(gch), text.size() / 2);
  // TESSERA_PRECOMPILED_HEADERS=0 turns them off.
  setenv("TESSERA_PRECOMPILED_HEADERS", "0", 1);
  EXPECT_EQ(PrecompiledHeaderDir(include_dir_, "tessera/dsl.h", flags, cache_dir_), "");
  unsetenv("TESSERA_PRECOMPILED_HEADERS");
}

TEST(Hash128, StableAndFieldSeparated) {
  EXPECT_EQ(Hash128Hex("tessera").size(), 32u);
  EXPECT_EQ(Hash128Hex("tessera"), Hash128Hex("tessera"));
  EXPECT_NE(Hash128Hex("tessera"), Hash128Hex("tesserb"));
  EXPECT_NE(Hash128Hex(""), Hash128Hex(std::string(1, '\0')));
  EXPECT_NE(Hasher128().UpdateField("ab").UpdateField("c").HexDigest(),
            Hasher128().UpdateField("a").UpdateField("bc").HexDigest());
  EXPECT_EQ(Hasher128().Update("ab").Update("c").HexDigest(), Hash128Hex("abc"));
}

}  // namespace
}  // namespace tessera
