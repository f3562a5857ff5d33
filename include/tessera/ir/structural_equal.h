// Structural equality of IR: same shape and values, variables compared by where they are bound.
#pragma once

#include <string>

#include "tessera/ir/node.h"

namespace tessera {

/*!
 * \brief Whether `a` and `b` are the same program up to the names of bound variables.
 *
 * Nodes must have the same kind, dtype and fields; spans and names (of vars and buffers) are
 * ignored. A variable bound in `a` (Let, LetStmt, For, Allocate, PrimFunc params, the IterVar of
 * an AttrStmt or a thread-bound For, block iterators) matches the variable bound at the same
 * place in `b`, one to one. Defining a buffer (PrimFunc buffer_map, DeclBuffer, a block's
 * alloc_buffers and match_buffers) compares its fields and binds its data
 * pointer and any bare-Var shape, stride or offset, so symbolic shapes match by position. Free
 * variables must be the same object unless `map_free_vars`, which pairs them at first use.
 * A buffer used without a definition in scope is compared field by field at its first use and
 * paired, one to one, with its counterpart (with or without `map_free_vars`).
 * Block names are hints and are ignored. Statement sequences compare flattened (a nested SeqStmt
 * or a SeqStmt of one statement is the same program as its statements). GlobalVars compare by name,
 * Ops by identity, floats exactly (NaN equals NaN) and IRModules by function name regardless of
 * order. Any ObjectRef converts: Expr, Stmt, PrimFunc, IRModule, ...
 */
/*!
 * `bind_free_buffers` (TVM's rule, used by the Python structural_equal / assert_structural_equal):
 * a buffer used without a definition pairs at first use with its counterpart even when their
 * data pointers (or symbolic shapes) are different free variables; those variables pair from
 * then on. The passes leave it off: for them two free buffers over different data differ.
 */
bool StructuralEqual(const ObjectRef& a, const ObjectRef& b, bool map_free_vars = false,
                     bool bind_free_buffers = false);

/*!
 * \brief Why `a` and `b` are not structurally equal: the path of the first mismatch and the two
 *  values, e.g. "root.body.seq[1].value.b: IntImm 1 vs IntImm 2". Empty when they are equal.
 */
std::string StructuralEqualFailure(const ObjectRef& a, const ObjectRef& b,
                                   bool map_free_vars = false, bool bind_free_buffers = false);

/*! \brief Throws tessera::Error (ErrorKind::kValue) with the first mismatch unless equal. */
void AssertStructuralEqual(const ObjectRef& a, const ObjectRef& b, bool map_free_vars = false);

/*! \brief Equality predicate for hash containers keyed by IR (with StructuralHashFn). */
struct StructuralEqualFn {
  bool operator()(const ObjectRef& a, const ObjectRef& b) const { return StructuralEqual(a, b); }
};

}  // namespace tessera
