// Functions and modules: PrimFunc, GlobalVar, IRModule.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/ir/buffer.h"
#include "tessera/ir/stmt.h"

namespace tessera {

/*! \brief A function's name in its module; calls refer to functions through it. */
struct GlobalVarNode : Object {
  TESSERA_NODE_KIND(GlobalVar)
  std::string name_hint;
  explicit GlobalVarNode(std::string n) : Object(kKind), name_hint(std::move(n)) {}
  static Ref<GlobalVarNode> Make(std::string name) { return std::make_shared<GlobalVarNode>(std::move(name)); }
};
using GlobalVar = Ref<GlobalVarNode>;

/*! \brief A low-level function: parameters (handles and scalars), the buffers bound to handle
 *  parameters, a body, the return type (void for none) and attributes ("global_symbol", ...). */
struct PrimFuncNode : Object {
  TESSERA_NODE_KIND(PrimFunc)
  std::vector<Var> params;
  /*! \brief Parameter -> buffer, in parameter order. */
  std::vector<std::pair<Var, Buffer>> buffer_map;
  Stmt body;
  DataType ret_type;
  AttrMap attrs;
  Span span;
  PrimFuncNode(std::vector<Var> p, std::vector<std::pair<Var, Buffer>> bm, Stmt b, DataType r,
               AttrMap a, Span s)
      : Object(kKind), params(std::move(p)), buffer_map(std::move(bm)), body(std::move(b)),
        ret_type(r), attrs(std::move(a)), span(std::move(s)) {
    IndexBuffers();
  }
  static Ref<PrimFuncNode> Make(std::vector<Var> params,
                                std::vector<std::pair<Var, Buffer>> buffer_map, Stmt body,
                                DataType ret_type = DataType::Void(), AttrMap attrs = {},
                                Span span = {});
  /*! \brief The buffer bound to `param`, or null. */
  Buffer GetBuffer(const Var& param) const;
  /*! \brief A string attribute, or `fallback`. */
  std::string GetStrAttr(const std::string& key, const std::string& fallback = "") const;
  /*! \brief An integer attribute, or `fallback`. */
  int64_t GetIntAttr(const std::string& key, int64_t fallback = 0) const;
  /*! \brief A copy with one attribute set. */
  Ref<PrimFuncNode> WithAttr(const std::string& key, ObjectRef value) const;
  /*! \brief A copy with another body. */
  Ref<PrimFuncNode> WithBody(Stmt body) const;

 private:
  void IndexBuffers();
  /*! \brief Parameter -> position in buffer_map, for functions of many buffers (GetBuffer per
   *  parameter would otherwise be quadratic); empty for small maps, which are scanned. */
  std::unordered_map<const VarNode*, size_t> buffer_index_;
};
using PrimFunc = Ref<PrimFuncNode>;

/*! \brief Functions by name, in insertion order, plus module attributes. */
struct IRModuleNode : Object {
  TESSERA_NODE_KIND(IRModule)
  std::vector<std::pair<GlobalVar, PrimFunc>> functions;
  AttrMap attrs;
  IRModuleNode(std::vector<std::pair<GlobalVar, PrimFunc>> f, AttrMap a)
      : Object(kKind), functions(std::move(f)), attrs(std::move(a)) {}
  /*! \brief Checks that names are unique. */
  static Ref<IRModuleNode> Make(std::vector<std::pair<GlobalVar, PrimFunc>> functions,
                                AttrMap attrs = {});
  /*! \brief A module holding `func` under `name`. */
  static Ref<IRModuleNode> FromFunc(PrimFunc func, const std::string& name = "main");
  GlobalVar GetGlobalVar(const std::string& name) const;  // null when absent
  PrimFunc Lookup(const std::string& name) const;        // null when absent
  PrimFunc Lookup(const GlobalVar& gv) const;
  /*! \brief A copy with `func` added or replacing the function of the same name. */
  Ref<IRModuleNode> WithFunction(const GlobalVar& gv, PrimFunc func) const;
};
using IRModule = Ref<IRModuleNode>;

}  // namespace tessera
