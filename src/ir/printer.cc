// TVMScript printer: renders IR as Python text that the tessera.script parser reads back.
#include "tessera/ir/printer.h"
#include "tessera/ir/printer_verbose.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/escape.h"

namespace tessera {
namespace {

// Python operator precedence, loosest first. An operand that binds looser than its context
// is parenthesised.
enum Prec : int { kOr = 1, kAnd, kNot, kCompare, kAdditive, kMultiplicative, kUnary, kAtom };

/*! \brief A printed expression. `literal` marks a bare Python int: the parser evaluates an
 *  operator between two literals in Python, so `1 + 2` would read back as 3, not as an Add. */
struct Doc {
  std::string text;
  int prec = kAtom;
  bool literal = false;
};

std::string Join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string Paren(const Doc& d, int min_prec) {
  return d.prec < min_prec ? "(" + d.text + ")" : d.text;
}

std::string Quote(const std::string& s) { return tessera::Quote(s, QuoteStyle::kPython); }

// The shortest decimal that reads back as the same double, spelled as Python's repr spells it.
std::string FloatRepr(double v) {
  char buf[64];
  int digits = 1;
  for (; digits < 17; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*e", digits - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::snprintf(buf, sizeof(buf), "%.*e", digits - 1, v);
  int exponent = std::atoi(std::strchr(buf, 'e') + 1);
  if (exponent >= -4 && exponent < 16) {
    std::snprintf(buf, sizeof(buf), "%.*g", std::max(digits, exponent + 1), v);
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

/*! \brief The shortest decimal that reads back to `v` at the precision of float dtype `t`
 *  (float64 as FloatRepr; narrower floats at float32 precision, which holds them exactly). */
std::string FloatRepr32(DataType t, double v) {
  if (t.bits() == 64) return FloatRepr(v);
  char buf[64];
  int digits = 1;
  for (; digits < 9; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
    if (static_cast<float>(std::strtod(buf, nullptr)) == static_cast<float>(v)) break;
  }
  std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string IntDigits(DataType t, int64_t v) {
  return t.is_uint() ? std::to_string(static_cast<uint64_t>(v)) : std::to_string(v);
}

bool IsIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

// A valid Python identifier made from a name hint ("i.outer" -> "i_outer", "" -> "v").
std::string Sanitize(const std::string& hint) {
  std::string s;
  for (unsigned char c : hint) s += (std::isalnum(c) || c == '_') && c < 0x80 ? c : '_';
  if (s.empty()) return "v";
  if (std::isdigit(static_cast<unsigned char>(s[0]))) s = "v" + s;
  return s;
}

bool IsPythonKeyword(const std::string& s) {
  static const std::unordered_set<std::string> kWords = {
      "False",   "None",     "True",     "and",    "as",   "assert", "async",  "await",
      "break",   "class",    "continue", "def",    "del",  "elif",   "else",   "except",
      "finally", "for",      "from",     "global", "if",   "import", "in",     "is",
      "lambda",  "nonlocal", "not",      "or",     "pass", "raise",  "return", "try",
      "while",   "with",     "yield",    "range",  "cls"};
  return kWords.count(s) != 0;
}

// Intrinsics whose result type cannot be inferred from the arguments: dtype is argument 0.
bool TakesDtypeFirst(const std::string& short_name) {
  return short_name == "reinterpret" || short_name == "call_extern" ||
         short_name == "call_pure_extern" || short_name == "call_intrin";
}

const char* IterVarTypeName(IterVarType t) {
  static const char* const kNames[] = {"DataPar", "ThreadIndex", "CommReduce", "Ordered", "Opaque"};
  return kNames[static_cast<int>(t)];
}

void CollectVars(const Expr& e, std::vector<const VarNode*>* out) {
  if (!e) return;
  PostOrderVisit(e, [out](const ObjectRef& n) {
    if (auto* v = AsPtr<VarNode>(n)) out->push_back(v);
  });
}

// Variables in a buffer's shape, strides and element offset.
std::vector<const VarNode*> BufferFieldVars(const BufferNode* b) {
  std::vector<const VarNode*> vars;
  for (const Expr& e : b->shape) CollectVars(e, &vars);
  for (const Expr& e : b->strides) CollectVars(e, &vars);
  CollectVars(b->elem_offset, &vars);
  return vars;
}

// Every variable a function body refers to, directly or through the buffers it uses.
std::unordered_set<const VarNode*> VarsUsedIn(const Stmt& body) {
  std::unordered_set<const VarNode*> used;
  auto add_buffer = [&used](const Buffer& b) {
    used.insert(b->data.get());
    for (const VarNode* v : BufferFieldVars(b.get())) used.insert(v);
  };
  PostOrderVisit(body, [&](const ObjectRef& n) {
    if (auto* v = AsPtr<VarNode>(n)) used.insert(v);
    if (auto* load = AsPtr<BufferLoadNode>(n)) add_buffer(load->buffer);
    if (auto* store = AsPtr<BufferStoreNode>(n)) add_buffer(store->buffer);
    if (auto* decl = AsPtr<DeclBufferNode>(n)) add_buffer(decl->buffer);
    if (auto* realize = AsPtr<BufferRealizeNode>(n)) add_buffer(realize->buffer);
    if (auto* block = AsPtr<BlockNode>(n)) {
      for (const BufferRegion& r : block->reads) add_buffer(r->buffer);
      for (const BufferRegion& r : block->writes) add_buffer(r->buffer);
      for (const Buffer& b : block->alloc_buffers) add_buffer(b);
      for (const MatchBufferRegion& m : block->match_buffers) {
        add_buffer(m->buffer);
        add_buffer(m->source->buffer);
      }
    }
    if (auto* attr = AsPtr<AttrStmtNode>(n)) {
      if (auto* v = AsPtr<VarNode>(attr->node)) used.insert(v);
      if (auto* iv = AsPtr<IterVarNode>(attr->node)) used.insert(iv->var.get());
      if (auto* b = AsPtr<BufferNode>(attr->node)) add_buffer(GetRef(b));
    }
  });
  return used;
}

bool UsesAny(const Expr& e, const std::unordered_set<const VarNode*>& vars) {
  std::vector<const VarNode*> used;
  CollectVars(e, &used);
  return std::any_of(used.begin(), used.end(), [&](const VarNode* v) { return vars.count(v); });
}

// A loop that `range(n)` and `T.grid` can express.
bool IsPlainSerial(const ForNode* op) {
  return op->for_kind == ForKind::kSerial && op->annotations.empty() && IsConstInt(op->min, 0) &&
         op->HasTrivialStep();
}

class ScriptPrinter : public ExprFunctor<Doc>, public StmtFunctor<void> {
 public:
  explicit ScriptPrinter(const PrinterConfig& cfg, const ScriptOptions& opts = {})
      : cfg_(cfg), opts_(opts), verbose_expr_(opts.verbose_expr) {}

  void set_verbose_expr(bool verbose) { verbose_expr_ = verbose; }

  std::string Print(const ObjectRef& node) {
    if (!node) {
      Emit("None");
    } else if (auto* mod = AsPtr<IRModuleNode>(node)) {
      PrintHeader();
      PrintModule(mod);
    } else if (auto* func = AsPtr<PrimFuncNode>(node)) {
      PrintHeader(/*with_ir=*/false);
      PrintPrimFunc(Sanitize(func->GetStrAttr("global_symbol", "main")), func);
    } else if (IsStmtKind(node->kind)) {
      BeginScope();
      // As TVM: a statement printed alone uses the scoped forms (`with T.LetStmt(...) as v:`);
      // only the last statement of a sequence prints concisely.
      tail_ = node->kind == NodeKind::kSeqStmt;
      VisitStmt(std::static_pointer_cast<StmtNode>(node));
    } else if (auto* match = AsPtr<MatchBufferRegionNode>(node)) {
      BeginScope();
      std::string source = RegionText(match->source.get());
      std::string args = BufferArgs(match->buffer.get(), /*with_data=*/false);
      std::string name = DefineBuffer(match->buffer.get());
      Emit(name + " = " + T("match_buffer") + "(" + source + ", " + args + ")");
    } else if (auto* range = AsPtr<RangeNode>(node)) {
      Emit(I("Range") + "(" + ExprText(range->min) + ", " + StopText(range->min, range->extent) +
           ")");
    } else if (verbose_expr_) {
      // The free variables and buffers the object uses are declared above it
      // (`a = T.int32()`, `A = T.Buffer(...)`), then the object itself prints.
      BeginScope();
      Emit(ObjectText(node));
    } else if (auto* buf = AsPtr<BufferNode>(node)) {
      Emit(T("Buffer") + "(" + BufferArgs(buf, /*with_data=*/false) + ")");
    } else {
      Emit(ObjectText(node));
    }
    return WithMetadata(Render());
  }

 private:
  // ---- output: lines with indentation, plus anchors where declarations are inserted ----
  struct Line {
    int indent;
    std::string text;
    bool is_anchor;  // prints nothing itself; holds inserted declarations
    std::vector<std::pair<int, std::string>> inserted;
    // The tag of a marked line (underlined in the output), or a comment ending the line.
    const std::string* mark = nullptr;
    const std::string* comment = nullptr;
    // Underlined whole (a statement, function or module of `cfg.underline`).
    bool underlined = false;
  };
  /*! \brief Where declarations that depend on a binder go: after `line`, at `indent`. */
  struct Anchor {
    size_t line = 0;
    int indent = 0;
  };

  // Marks the first line a statement prints when the configuration asks for it.
  void VisitStmt(const Stmt& s) override {
    size_t first = lines_.size();
    StmtFunctor<void>::VisitStmt(s);
    MarkFirstLine(s.get(), first);
    UnderlineLines(s.get(), first);
  }
  /*! \brief Underlines the lines from `from` on when `node` is to be underlined. */
  void UnderlineLines(const Object* node, size_t from) {
    if (!opts_.underline.count(node)) return;
    for (size_t i = from; i < lines_.size(); ++i) lines_[i].underlined = true;
  }
  /*! \brief An expression to underline prints between these markers; Render turns them into
   *  carets on the next line. */
  static constexpr char kUnderlineBegin = '\x01';
  static constexpr char kUnderlineEnd = '\x02';
  Doc VisitExpr(const Expr& e) override {
    Doc doc = ExprFunctor<Doc>::VisitExpr(e);
    if (e && opts_.underline.count(e.get())) {
      doc.text = std::string(1, kUnderlineBegin) + doc.text + std::string(1, kUnderlineEnd);
    }
    return doc;
  }
  /*! \brief The text of a line without underline markers, and its caret line (empty when
   *  nothing on it is underlined). `whole` underlines all of it. */
  static std::pair<std::string, std::string> SplitUnderline(const std::string& text, bool whole) {
    std::string clean, carets;
    int depth = 0;
    bool any = whole;
    for (char c : text) {
      if (c == kUnderlineBegin) {
        ++depth;
        any = true;
      } else if (c == kUnderlineEnd) {
        --depth;
      } else {
        clean += c;
        carets += (whole || depth > 0) ? '^' : ' ';
      }
    }
    if (!any) return {clean, ""};
    while (!carets.empty() && carets.back() == ' ') carets.pop_back();
    return {clean, carets};
  }
  /*! \brief Whether a line opens an indented body (a comment on it goes on the line before). */
  static bool IsCompoundHeader(const std::string& text) {
    if (text.empty() || text[0] == '#' || text.back() != ':') return false;
    for (const char* head : {"with ", "for ", "if ", "while ", "def ", "class ", "else:"}) {
      if (text.compare(0, std::string(head).size(), head) == 0) return true;
    }
    return false;
  }
  void MarkFirstLine(const Object* node, size_t from) {
    auto it = cfg_.marks.find(node);
    auto comment = cfg_.comments.find(node);
    if (it == cfg_.marks.end() && comment == cfg_.comments.end()) return;
    for (size_t i = from; i < lines_.size(); ++i) {
      if (!lines_[i].is_anchor) {
        if (it != cfg_.marks.end()) {
          if (!lines_[i].mark) lines_[i].mark = &it->second;
        } else if (!lines_[i].comment) {
          lines_[i].comment = &comment->second;
        }
        return;
      }
    }
  }
  bool IsMarked(const Object* node) const {
    return cfg_.marks.count(node) != 0 || cfg_.comments.count(node) != 0;
  }

  std::string T(const std::string& name) const { return cfg_.tir_prefix + "." + name; }
  std::string I(const std::string& name) const { return cfg_.ir_prefix + "." + name; }

  size_t Emit(const std::string& text) {
    lines_.push_back({indent_, text, false, {}});
    return lines_.size() - 1;
  }
  Anchor EmitAnchor() {
    lines_.push_back({indent_, "", true, {}});
    return {lines_.size() - 1, indent_};
  }
  void Insert(const Anchor& at, const std::string& text) {
    if (scoped_) lines_[at.line].inserted.emplace_back(at.indent, text);
  }

  std::string Render() {
    std::vector<std::pair<int, const std::string*>> out;
    std::vector<std::string> marked;  // text of marked lines and their underlines
    marked.reserve(3 * lines_.size());
    // Texts made here live in `marked`; a deque keeps their addresses stable.
    std::deque<std::string> made;
    auto add = [&](int indent, const std::string& text, bool whole) {
      auto [clean, carets] = SplitUnderline(text, whole && !text.empty());
      if (carets.empty() && clean.size() == text.size()) {
        out.emplace_back(indent, &text);
        return;
      }
      made.push_back(std::move(clean));
      out.emplace_back(indent, &made.back());
      if (!carets.empty()) {
        made.push_back(std::move(carets));
        out.emplace_back(indent, &made.back());
      }
    };
    for (const Line& line : lines_) {
      if (line.mark) {
        std::string clean = SplitUnderline(line.text, false).first;
        if (IsCompoundHeader(clean) && !line.mark->empty()) {
          // As TVM: the tag of a compound statement is a comment line of its own above it.
          marked.push_back("# " + *line.mark);
          out.emplace_back(line.indent, &marked.back());
          marked.push_back(clean);
        } else {
          marked.push_back(clean + (line.mark->empty() ? "" : "  # " + *line.mark));
        }
        out.emplace_back(line.indent, &marked.back());
        marked.push_back(std::string(clean.size(), '^'));
        out.emplace_back(line.indent, &marked.back());
      } else if (line.comment && !line.is_anchor) {
        auto [clean, carets] = SplitUnderline(line.text, line.underlined);
        if (IsCompoundHeader(clean)) {
          // As TVM: a comment on a compound statement is a line of its own above it.
          size_t start = 0;
          while (true) {
            size_t end = line.comment->find('\n', start);
            made.push_back("# " + line.comment->substr(start, end - start));
            out.emplace_back(line.indent, &made.back());
            if (end == std::string::npos) break;
            start = end + 1;
          }
          made.push_back(clean);
        } else {
          made.push_back(clean + "  # " + *line.comment);
        }
        out.emplace_back(line.indent, &made.back());
        if (!carets.empty()) {
          made.push_back(std::move(carets));
          out.emplace_back(line.indent, &made.back());
        }
      } else if (!line.is_anchor) {
        add(line.indent, line.text, line.underlined);
      }
      for (const auto& [indent, text] : line.inserted) add(indent, text, false);
    }
    std::string result;
    int width = static_cast<int>(std::to_string(out.size()).size());
    for (size_t i = 0; i < out.size(); ++i) {
      std::string text = out[i].second->empty()
                             ? ""
                             : std::string(out[i].first * cfg_.indent_spaces, ' ') + *out[i].second;
      if (cfg_.print_line_numbers) {
        std::string number = std::to_string(i + 1);
        text = std::string(width - number.size(), ' ') + number + (text.empty() ? "" : " ") + text;
      }
      result += (i ? "\n" : "") + text;
    }
    return result;
  }

  // ---- the metadata section (TVM's): objects printed as `metadata["<type>"][<index>]` ----
  /*! \brief The index of `s` among the strings in the metadata; one entry per object, as TVM
   *  (the same object printed twice is one entry, two equal strings are two). */
  size_t MetadataIndex(const StringImmNode* s) {
    auto it = std::find(metadata_strings_.begin(), metadata_strings_.end(), s);
    if (it != metadata_strings_.end()) return static_cast<size_t>(it - metadata_strings_.begin());
    metadata_strings_.push_back(s);
    return metadata_strings_.size() - 1;
  }
  /*! \brief `text` with the metadata section: with `show_meta`, a first line defining
   *  `metadata` (tessera's JSON document, read by `<package>.ir.load_json`) so that the text
   *  parses back; else, as TVM, a closing comment saying it was left out. */
  std::string WithMetadata(std::string text) const {
    if (metadata_strings_.empty()) return text;
    if (!cfg_.show_meta) {
      return text + "\n\n# Metadata not shown: print with script(show_meta=True) to include it.";
    }
    std::string json = "{\"format\": \"tessera-metadata\", \"version\": 1, \"metadata\": "
                       "{\"tir.StringImm\": [";
    for (size_t i = 0; i < metadata_strings_.size(); ++i) {
      json += (i ? ", " : "") + tessera::Quote(metadata_strings_[i]->value, QuoteStyle::kJson);
    }
    json += "]}}";
    // Inside the Python string, backslashes and quotes are escaped (the JSON text is kept).
    std::string literal;
    for (char c : json) {
      if (c == '\\' || c == '"') literal += '\\';
      literal += c;
    }
    return "metadata = " + ScriptHeaderPackage() + ".ir.load_json(\"\"\"" + literal + "\"\"\")\n" +
           text;
  }

  // Opens a function or statement scope: free variables, then free buffers, are declared at
  // its top.
  void BeginScope() {
    names_.clear();
    used_names_.clear();
    var_anchor_.clear();
    scoped_ = true;
    tail_ = true;
    top_vars_ = EmitAnchor();
    top_buffers_ = EmitAnchor();
  }

  // ---- names ----
  std::string Fresh(const std::string& hint, const Object* obj = nullptr) {
    std::string base = Sanitize(hint), name;
    if (obj && opts_.show_object_address) {
      char address[32];
      std::snprintf(address, sizeof(address), "_0x%llx",
                    static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(obj)));
      base += address;
    }
    name = base;
    for (int k = 1; used_names_.count(name) || IsReserved(name); ++k) {
      name = base + "_" + std::to_string(k);
    }
    used_names_.insert(name);
    return name;
  }
  bool IsReserved(const std::string& name) const {
    return IsPythonKeyword(name) || name == cfg_.tir_prefix || name == cfg_.ir_prefix;
  }

  /*! \brief Names a variable at its binding site (a rebinding of one Var reuses its name). */
  std::string DefineVar(const VarNode* v) {
    auto it = names_.find(v);
    return it != names_.end() ? it->second : (names_[v] = Fresh(v->name, v));
  }
  void BindAt(const VarNode* v, size_t line, int indent) { var_anchor_[v] = {line, indent}; }
  /*! \brief Frees the name of a loop variable or block iterator at the end of its scope, so
   *  sibling loops and blocks print as `i` and `vi` again (the parser scopes them). */
  void ReleaseName(const VarNode* v) {
    auto it = names_.find(v);
    if (it != names_.end()) used_names_.erase(it->second);
  }

  /*! \brief A variable used without a binder in sight is declared at the top of the scope. */
  std::string VarRef(const VarNode* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string name = names_[v] = Fresh(v->name, v);
    Insert(top_vars_, name + " = " + VarConstructor(v));
    return name;
  }

  std::string DefineBuffer(const BufferNode* b) {
    auto it = names_.find(b);
    return it != names_.end() ? it->second : (names_[b] = Fresh(b->name, b));
  }
  /*! \brief Whether the buffer's data pointer is the one its declaration would create: a
   *  pointer to the buffer's element type. */
  static bool DataMatches(const BufferNode* b) {
    return b->data->pointer && b->data->pointer->element == b->dtype;
  }
  /*! \brief A buffer declared with a fresh data pointer: the pointer prints as `A.data`. */
  void OwnData(const BufferNode* b, const std::string& name) {
    if (!names_.count(b->data.get())) names_[b->data.get()] = name + ".data";
  }

  /*! \brief A buffer used without a definition gets `A = T.Buffer(...)` right after the
   *  innermost binder of the variables it depends on (or at the top of the scope). */
  std::string BufferRef(const BufferNode* b) {
    auto it = names_.find(b);
    if (it != names_.end()) return it->second;
    bool owns_data = !names_.count(b->data.get()) && DataMatches(b);
    std::string args = BufferArgs(b, /*with_data=*/!owns_data);
    std::vector<const VarNode*> deps = BufferFieldVars(b);
    if (!owns_data) deps.push_back(b->data.get());
    Anchor at = top_buffers_;
    for (const VarNode* v : deps) {
      auto a = var_anchor_.find(v);
      if (a != var_anchor_.end() && a->second.line > at.line) at = a->second;
    }
    std::string name = DefineBuffer(b);
    if (owns_data) OwnData(b, name);
    Insert(at, name + " = " + T("Buffer") + "(" + args + ")");
    return name;
  }

  // ---- types ----
  std::string TypeText(DataType t) const { return T(t.is_void() ? "void" : t.ToString()); }
  std::string PointerText(const PointerType& p) const {
    return T("handle") + "(" + Quote(p.element.ToString()) + ", " + Quote(p.scope) + ")";
  }
  /*! \brief The annotation of a parameter or LetStmt variable. */
  std::string VarType(const VarNode* v) const {
    return v->pointer ? PointerText(*v->pointer) : TypeText(v->dtype);
  }
  /*! \brief The call that creates a free variable: `T.int32()`, `T.handle("float32", "shared")`. */
  std::string VarConstructor(const VarNode* v) const {
    if (v->pointer) return PointerText(*v->pointer);
    if (v->kind == NodeKind::kSizeVar) return TypeText(v->dtype) + "(is_size_var=True)";
    return TypeText(v->dtype) + "()";
  }

  // ---- buffers, attributes and other objects ----
  std::string Tuple(const std::vector<Expr>& items) {
    std::vector<std::string> parts;
    for (const Expr& e : items) parts.push_back(ExprText(e));
    return "(" + Join(parts) + (parts.size() == 1 ? ",)" : ")");
  }

  /*! \brief Arguments of T.Buffer / T.decl_buffer / T.match_buffer; keywords only when not the
   *  default. With `with_data` the scope comes from the data pointer, else it is spelled. */
  std::string BufferArgs(const BufferNode* b, bool with_data, bool annotation = false) {
    // As TVM: a declaration omits the default dtype, float32; an annotation always spells it.
    std::vector<std::string> args = {Tuple(b->shape)};
    if (annotation || b->dtype != DataType::Float(32)) args.push_back(Quote(b->dtype.ToString()));
    if (with_data) args.push_back("data=" + VarRef(b->data.get()));
    if (!b->strides.empty()) args.push_back("strides=" + Tuple(b->strides));
    if (b->elem_offset && !IsConstInt(b->elem_offset, 0)) {
      args.push_back("elem_offset=" + ExprText(b->elem_offset));
    }
    std::string scope = b->data->pointer ? b->data->pointer->scope : "global";
    if (!with_data && scope != "global") args.push_back("scope=" + Quote(scope));
    if (b->data_alignment != 64) args.push_back("align=" + std::to_string(b->data_alignment));
    if (b->offset_factor != 1) args.push_back("offset_factor=" + std::to_string(b->offset_factor));
    if (!b->axis_separators.empty()) {
      std::vector<std::string> seps;
      for (int64_t s : b->axis_separators) seps.push_back(std::to_string(s));
      args.push_back("axis_separators=[" + Join(seps) + "]");
    }
    return Join(args);
  }

  /*! \brief An attribute or annotation value as a Python literal where it has one. */
  std::string AttrValue(const ObjectRef& v) {
    if (auto* i = AsPtr<IntImmNode>(v)) {
      if (i->dtype.is_bool()) return i->value ? "True" : "False";
      return IntDigits(i->dtype, i->value);
    }
    if (auto* f = AsPtr<FloatImmNode>(v)) {
      if (std::isfinite(f->value)) return FloatRepr(f->value);
    }
    if (auto* s = AsPtr<StringImmNode>(v)) return Quote(s->value);
    if (auto* a = AsPtr<ArrayNode>(v)) {
      std::vector<std::string> items;
      for (const ObjectRef& item : a->items) items.push_back(AttrValue(item));
      return "[" + Join(items) + "]";
    }
    if (auto* m = AsPtr<MapNode>(v)) {
      if (m->object_items.empty()) return AttrDict(m->items);
      std::vector<std::string> items;
      for (const auto& [key, value] : m->items) items.push_back(Quote(key) + ": " + AttrValue(value));
      for (const auto& [key, value] : m->object_items)
        items.push_back(AttrValue(key) + ": " + AttrValue(value));
      return "{" + Join(items) + "}";
    }
    return ObjectText(v);
  }

  std::string AttrDict(const AttrMap& attrs) {
    std::vector<std::string> items;
    for (const auto& [key, value] : attrs) items.push_back(Quote(key) + ": " + AttrValue(value));
    return "{" + Join(items) + "}";
  }

  /*! \brief A thread IterVar is the variable declared by `T.env_thread`; others print whole. */
  std::string IterVarText(const IterVarNode* iv) {
    const VarNode* v = iv->var.get();
    if (!iv->thread_tag.empty()) {
      auto it = names_.find(v);
      if (it != names_.end()) return it->second;
      std::string name = names_[v] = Fresh(v->name);
      Insert(top_vars_, name + " = " + T("env_thread") + "(" + Quote(iv->thread_tag) + ")");
      return name;
    }
    std::string dom = iv->dom ? ObjectText(iv->dom) : "None";
    return T("iter_var") + "(" + VarRef(v) + ", " + dom + ", " +
           Quote(IterVarTypeName(iv->iter_type)) + ", " + Quote(iv->thread_tag) + ")";
  }

  std::string ObjectText(const ObjectRef& obj) {
    if (!obj) return "None";
    if (IsExprKind(obj->kind)) return ExprText(std::static_pointer_cast<ExprNode>(obj));
    switch (obj->kind) {
      case NodeKind::kBuffer:
        return BufferRef(static_cast<const BufferNode*>(obj.get()));
      case NodeKind::kIterVar:
        return IterVarText(static_cast<const IterVarNode*>(obj.get()));
      case NodeKind::kRange: {
        auto* r = static_cast<const RangeNode*>(obj.get());
        return T("Range") + "(" + ExprText(r->min) + ", " + StopText(r->min, r->extent) + ")";
      }
      case NodeKind::kArray:
      case NodeKind::kMap:
        return AttrValue(obj);
      case NodeKind::kBufferRegion:
        return RegionText(static_cast<const BufferRegionNode*>(obj.get()));
      case NodeKind::kCommReducer:
        return CommReducerText(static_cast<const CommReducerNode*>(obj.get()));
      case NodeKind::kGlobalVar:
        return CalleeName(static_cast<const GlobalVarNode*>(obj.get()));
      case NodeKind::kOp:
        return Quote(static_cast<const OpNode*>(obj.get())->name);
      default:
        return Quote(std::string("<") + NodeKindName(obj->kind) + ">");
    }
  }

  /*! \brief `T.comm_reducer(lambda x, y: x + y, [T.float32(0.0)])`: lhs then rhs as the
   *  lambda's parameters; several values give a tuple. */
  std::string CommReducerText(const CommReducerNode* r) {
    std::vector<std::string> params;
    for (const auto* vars : {&r->lhs, &r->rhs}) {
      for (const Var& v : *vars) params.push_back(names_[v.get()] = Fresh(v->name));
    }
    std::vector<std::string> results, identities;
    for (const Expr& e : r->result) results.push_back(ExprText(e));
    for (const Expr& e : r->identity_element) identities.push_back(ExprText(e));
    std::string body = results.size() == 1 ? results[0] : "(" + Join(results) + ")";
    return T("comm_reducer") + "(lambda " + Join(params) + ": " + body + ", [" +
           Join(identities) + "])";
  }

  std::string CalleeName(const GlobalVarNode* gv) const {
    return (in_module_ ? "cls." : "") + Sanitize(gv->name_hint);
  }

  // ---- modules and functions ----
  // As TVM: a module's header imports both dialects, a function's only the T dialect.
  void PrintHeader(bool with_ir = true) {
    if (with_ir) Emit("# from " + ScriptHeaderPackage() + ".script import ir as " + cfg_.ir_prefix);
    Emit("# from " + ScriptHeaderPackage() + ".script import tir as " + cfg_.tir_prefix);
    Emit("");
  }

  void PrintModule(const IRModuleNode* mod) {
    size_t first_line = Emit("@" + I("ir_module"));
    Emit("class Module:");
    ++indent_;
    in_module_ = true;
    if (!mod->attrs.empty()) Emit(I("module_attrs") + "(" + AttrDict(mod->attrs) + ")");
    for (size_t i = 0; i < mod->functions.size(); ++i) {
      if (i > 0 || !mod->attrs.empty()) Emit("");
      const auto& [gv, func] = mod->functions[i];
      PrintPrimFunc(Sanitize(gv->name_hint), func.get());
    }
    if (mod->functions.empty() && mod->attrs.empty()) Emit("pass");
    in_module_ = false;
    --indent_;
    UnderlineLines(mod, first_line);
  }

  void PrintPrimFunc(const std::string& name, const PrimFuncNode* func) {
    auto symbol = func->attrs.find("global_symbol");
    bool is_private = symbol == func->attrs.end() || func->GetIntAttr("tir.private", 0) != 0;
    AttrMap attrs = func->attrs;
    if (!is_private && func->GetStrAttr("global_symbol") == name) attrs.erase("global_symbol");
    size_t first_line = Emit("@" + T("prim_func") + (is_private ? "(private=True)" : ""));

    // Names are per function; the signature is built before the scope's anchors exist, so it
    // may refer only to earlier parameters.
    names_.clear();
    used_names_.clear();
    var_anchor_.clear();
    scoped_ = false;
    std::unordered_set<const VarNode*> body_vars = VarsUsedIn(func->body);
    // As TVM: buffers sharing a data pointer are all matched (`data=A.data`), none annotated.
    std::unordered_map<const VarNode*, int> data_uses;
    for (const auto& entry : func->buffer_map) ++data_uses[entry.second->data.get()];
    std::vector<std::string> params;
    std::vector<std::pair<std::string, const BufferNode*>> matched;
    for (const Var& param : func->params) {
      Buffer buf = func->GetBuffer(param);
      if (buf && data_uses[buf->data.get()] == 1 && CanAnnotate(buf.get(), param.get(), body_vars)) {
        std::string args = BufferArgs(buf.get(), /*with_data=*/false, /*annotation=*/true);
        std::string buffer_name = DefineBuffer(buf.get());
        OwnData(buf.get(), buffer_name);
        params.push_back(buffer_name + ": " + T("Buffer") + "(" + args + ")");
      } else {
        std::string param_name = DefineVar(param.get());
        params.push_back(param_name + ": " + VarType(param.get()));
        if (buf) matched.emplace_back(param_name, buf.get());
      }
    }
    std::string ret = func->ret_type.is_void() ? "" : " -> " + TypeText(func->ret_type);
    Emit("def " + name + "(" + Join(params) + ")" + ret + ":");
    ++indent_;
    if (!attrs.empty()) Emit(T("func_attr") + "(" + AttrDict(attrs) + ")");
    scoped_ = true;
    tail_ = true;
    top_vars_ = EmitAnchor();
    for (const auto& [handle, buf] : matched) {
      // A data pointer shared with another buffer, or of another element type, is spelled.
      bool with_data = names_.count(buf->data.get()) || !DataMatches(buf);
      std::string args = BufferArgs(buf, with_data);
      std::string buffer_name = DefineBuffer(buf);
      if (!with_data) OwnData(buf, buffer_name);
      Emit(buffer_name + " = " + T("match_buffer") + "(" + handle + ", " + args + ")");
    }
    top_buffers_ = EmitAnchor();
    if (cfg_.syntax_sugar && IsImplicitRoot(func->body)) {
      // The implicit root block: its allocations are function-level T.alloc_buffer calls.
      const BlockNode* root = static_cast<const BlockRealizeNode*>(func->body.get())->block.get();
      MarkFirstLine(root, Emit("# with " + T("block") + "(\"root\"):"));
      PrintAllocBuffers(root);
      VisitStmt(root->body);
    } else {
      VisitStmt(func->body);
    }
    scoped_ = false;
    --indent_;
    UnderlineLines(func, first_line);
  }

  /*! \brief Whether a parameter's buffer can be written as its annotation: the handle itself is
   *  not used elsewhere and the buffer's shape refers only to earlier parameters. */
  bool CanAnnotate(const BufferNode* buf, const VarNode* param,
                   const std::unordered_set<const VarNode*>& body_vars) const {
    if (!cfg_.syntax_sugar || body_vars.count(param) || names_.count(buf->data.get()) ||
        !DataMatches(buf)) {
      return false;
    }
    // As TVM: only a plain buffer (an annotation spells nothing but shape and dtype).
    std::string scope = buf->data->pointer ? buf->data->pointer->scope : "global";
    if (!buf->strides.empty() || (buf->elem_offset && !IsConstInt(buf->elem_offset, 0)) ||
        scope != "global" || buf->data_alignment != 64 || buf->offset_factor != 1 ||
        !buf->axis_separators.empty()) {
      return false;
    }
    for (const VarNode* v : BufferFieldVars(buf)) {
      if (!names_.count(v)) return false;
    }
    return true;
  }

  // ---- statements ----
  // `tail_` says whether the statement being printed is the last of its block. A binder
  // (LetStmt, Allocate, DeclBuffer, AssertStmt) scopes over the rest of the block, so only in
  // tail position may it print as a plain line followed by its body; elsewhere it uses `with`.

  void PrintBody(const Stmt& body) {
    ++indent_;
    tail_ = true;
    VisitStmt(body);
    --indent_;
  }

  /*! \brief Prints a binder as `concise` then its body, or as `with scoped:` around it, and
   *  records where declarations that depend on the bound variable go. */
  void PrintBinder(const std::string& concise, const std::string& scoped, const Stmt& body,
                   const VarNode* bound, const Object* node) {
    // As TVM: an annotated binder keeps its scope, so the comment names all it covers.
    bool is_tail = tail_ && !cfg_.comments.count(node);
    size_t line = Emit(is_tail ? concise : "with " + scoped + ":");
    Anchor at{line, is_tail ? indent_ : indent_ + 1};
    if (bound) var_anchor_[bound] = at;
    if (is_tail) {
      tail_ = true;
      VisitStmt(body);
    } else {
      PrintBody(body);
    }
  }

  void VisitStmt_(const LetStmtNode* op) override {
    std::string value = ExprText(op->value);
    std::string var = DefineVar(op->var.get());
    std::string annotation = op->var->pointer ? ", type_annotation=" + VarType(op->var.get()) : "";
    PrintBinder(var + ": " + VarType(op->var.get()) + " = " + value,
                T("LetStmt") + "(" + value + annotation + ") as " + var, op->body, op->var.get(),
                op);
  }

  // `with T.realize(A[0:128, 0:128], "scope"):` for a BufferRealize under its "realize_scope"
  // attribute (TVM's sugar for the pair); a bare BufferRealize prints without a scope. As TVM's,
  // a condition other than true is the `condition=` keyword.
  void PrintRealize(const BufferRealizeNode* op, const StringImmNode* scope) {
    std::vector<std::string> parts;
    for (const Range& r : op->bounds) {
      parts.push_back(ExprText(r->min) + ":" + StopText(r->min, r->extent));
    }
    std::string args = BufferRef(op->buffer.get()) + "[" + Join(parts) + "]";
    if (scope) args += ", " + Quote(scope->value);
    if (!IsConstInt(op->condition, 1)) args += ", condition=" + ExprText(op->condition);
    Emit("with " + T("realize") + "(" + args + "):");
    PrintBody(op->body);
  }

  void VisitStmt_(const BufferRealizeNode* op) override { PrintRealize(op, nullptr); }

  void VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == "realize_scope") {
      auto* realize = AsPtr<BufferRealizeNode>(op->body);
      auto* scope = AsPtr<StringImmNode>(op->value);
      if (realize && scope && realize->buffer.get() == AsPtr<BufferNode>(op->node)) {
        PrintRealize(realize, scope);
        return;
      }
    }
    auto* iv = AsPtr<IterVarNode>(op->node);
    bool launch = iv && !iv->thread_tag.empty() &&
                  (op->attr_key == "thread_extent" || op->attr_key == "virtual_thread");
    std::string node = ObjectText(op->node);
    std::string value = ExprText(op->value);
    if (launch) {
      Emit("with " + T("launch_thread") + "(" + node + ", " + value + "):");
    } else {
      Emit("with " + T("attr") + "(" + node + ", " + Quote(op->attr_key) + ", " + value + "):");
    }
    PrintBody(op->body);
  }

  void VisitStmt_(const AssertStmtNode* op) override {
    std::string cond = ExprText(op->condition), message = ExprText(op->message);
    PrintBinder("assert " + cond + ", " + message, T("Assert") + "(" + cond + ", " + message + ")",
                op->body, nullptr, op);
  }

  void VisitStmt_(const BufferStoreNode* op) override {
    std::string buf = BufferRef(op->buffer.get());
    if (op->predicate) {
      std::string indices = Indices(op->indices, /*allow_slice=*/false);
      std::string value = ExprText(op->value);
      Emit(buf + ".vstore([" + indices + "], " + value + ", predicate=" + ExprText(op->predicate) +
           ")");
    } else {
      std::string indices = Indices(op->indices, cfg_.syntax_sugar);
      Emit(buf + "[" + indices + "] = " + ExprText(op->value));
    }
  }

  void VisitStmt_(const AllocateNode* op) override {
    if (IsAllocateDeclBuffer(op)) {
      auto* decl = static_cast<const DeclBufferNode*>(op->body.get());
      std::string call =
          T("decl_buffer") + "(" + BufferArgs(decl->buffer.get(), /*with_data=*/false) + ")";
      std::string name = DefineBuffer(decl->buffer.get());
      OwnData(decl->buffer.get(), name);
      size_t first = lines_.size();
      PrintBinder(name + " = " + call, call + " as " + name, decl->body, op->buffer_var.get(), op);
      MarkFirstLine(decl, first);
      UnderlineLines(decl, first);
      return;
    }
    std::vector<std::string> extents;
    for (const Expr& e : op->extents) extents.push_back(ExprText(e));
    const auto& pointer = op->buffer_var->pointer;
    std::vector<std::string> args = {"[" + Join(extents) + "]", Quote(op->dtype.ToString()),
                                     Quote(pointer ? pointer->scope : "global")};
    if (op->condition && !IsConstInt(op->condition, 1)) {
      args.push_back("condition=" + ExprText(op->condition));
    }
    if (!op->annotations.empty()) args.push_back("annotations=" + AttrDict(op->annotations));
    std::string call = T("allocate") + "(" + Join(args) + ")";
    std::string var = DefineVar(op->buffer_var.get());
    PrintBinder(var + " = " + call, call + " as " + var, op->body, op->buffer_var.get(), op);
  }

  void VisitStmt_(const AllocateConstNode* op) override {
    std::vector<std::string> values, extents;
    int64_t n = op->NumElements();
    for (int64_t i = 0; i < n; ++i) {
      if (op->dtype.is_float()) {
        double v = op->FloatAt(i);
        values.push_back(std::isfinite(v) ? FloatRepr32(op->dtype, v)
                         : std::isnan(v)  ? "float(\"nan\")"
                                          : (v > 0 ? "float(\"inf\")" : "float(\"-inf\")"));
      } else {
        values.push_back(IntDigits(op->dtype, op->IntAt(i)));
      }
    }
    for (const Expr& e : op->extents) extents.push_back(ExprText(e));
    std::vector<std::string> args = {"[" + Join(values) + "]", Quote(op->dtype.ToString()),
                                     "[" + Join(extents) + "]"};
    if (!op->annotations.empty()) args.push_back("annotations=" + AttrDict(op->annotations));
    std::string call = T("allocate_const") + "(" + Join(args) + ")";
    std::string var = DefineVar(op->buffer_var.get());
    PrintBinder(var + " = " + call, call + " as " + var, op->body, op->buffer_var.get(), op);
  }

  void VisitStmt_(const DeclBufferNode* op) override {
    std::string call = T("decl_buffer") + "(" + BufferArgs(op->buffer.get(), true) + ")";
    std::string name = DefineBuffer(op->buffer.get());
    PrintBinder(name + " = " + call, call + " as " + name, op->body, nullptr, op);
  }

  /*! \brief TVM's sugar: an Allocate whose body declares a buffer of exactly that storage
   *  prints as one `T.decl_buffer` that allocates (its pointer is `buffer.data`). */
  bool IsAllocateDeclBuffer(const AllocateNode* op) const {
    auto* decl = AsPtr<DeclBufferNode>(op->body);
    if (!cfg_.syntax_sugar || !decl) return false;
    const BufferNode* b = decl->buffer.get();
    if (b->data.get() != op->buffer_var.get() || b->dtype != op->dtype ||
        (op->condition && !IsConstInt(op->condition, 1)) || !op->annotations.empty() ||
        b->shape.size() != op->extents.size() || !DataMatches(b) ||
        names_.count(op->buffer_var.get())) {
      return false;
    }
    for (size_t i = 0; i < b->shape.size(); ++i) {
      if (!StructuralEqual(b->shape[i], op->extents[i])) return false;
    }
    return true;
  }

  void VisitStmt_(const ForNode* op) override {
    // A chain of plain loops, each the only child of the previous, is one T.grid (unless an
    // extent depends on an outer loop of the chain: T.grid evaluates all extents first).
    std::vector<const ForNode*> loops = {op};
    if (cfg_.syntax_sugar && IsPlainSerial(op) && !IsMarked(op)) {
      std::unordered_set<const VarNode*> bound = {op->loop_var.get()};
      while (auto* inner = AsPtr<ForNode>(loops.back()->body)) {
        if (!IsPlainSerial(inner) || UsesAny(inner->extent, bound) || IsMarked(inner)) break;
        loops.push_back(inner);
        bound.insert(inner->loop_var.get());
      }
    }
    std::string head;
    if (loops.size() > 1) {
      std::vector<std::string> extents;
      for (const ForNode* loop : loops) extents.push_back(ExprText(loop->extent));
      head = T("grid") + "(" + Join(extents) + ")";
    } else if (IsPlainSerial(op)) {
      head = "range(" + ExprText(op->extent) + ")";
    } else if (op->for_kind == ForKind::kSerial && op->annotations.empty() &&
               (!op->step || AsConstInt(op->step))) {
      // As TVM: a step is range's third argument. (range takes only a literal step: a
      // symbolic one is printed as T.serial(..., step=v), which parses back.)
      head = "range(" + ExprText(op->min) + ", " + StopText(op->min, op->extent) +
             (op->step ? ", " + ExprText(op->step) : std::string()) + ")";
    } else {
      // As TVM prints it: the start only when it is not 0 (`T.thread_binding(2, thread=...)`).
      std::vector<std::string> args;
      if (!IsConstInt(op->min, 0) || op->step) args.push_back(ExprText(op->min));
      args.push_back(StopText(op->min, op->extent));
      if (op->thread_binding) args.push_back("thread=" + Quote(op->thread_binding->thread_tag));
      if (!op->annotations.empty()) args.push_back("annotations=" + AttrDict(op->annotations));
      if (op->step) args.push_back("step=" + ExprText(op->step));
      head = T(ForKindName(op->for_kind)) + "(" + Join(args) + ")";
    }
    std::vector<std::string> vars;
    for (const ForNode* loop : loops) vars.push_back(DefineVar(loop->loop_var.get()));
    size_t line = Emit("for " + Join(vars) + " in " + head + ":");
    for (const ForNode* loop : loops) {
      BindAt(loop->loop_var.get(), line, indent_ + 1);
      loops_[loop->loop_var.get()] = loop;
    }
    PrintBody(loops.back()->body);
    for (const ForNode* loop : loops) {
      loops_.erase(loop->loop_var.get());
      ReleaseName(loop->loop_var.get());
    }
  }

  void VisitStmt_(const WhileNode* op) override {
    Emit("while " + ExprText(op->condition) + ":");
    PrintBody(op->body);
  }

  void VisitStmt_(const IfThenElseNode* op) override {
    Emit("if " + ExprText(op->condition) + ":");
    PrintBody(op->then_case);
    if (op->else_case) {
      Emit("else:");
      PrintBody(op->else_case);
    }
  }

  void VisitStmt_(const SeqStmtNode* op) override {
    if (op->seq.empty()) {
      Emit(T("evaluate") + "(0)");
      return;
    }
    bool is_tail = tail_;
    for (size_t i = 0; i < op->seq.size(); ++i) {
      tail_ = is_tail && i + 1 == op->seq.size();
      VisitStmt(op->seq[i]);
    }
  }

  // ---- blocks ----

  /*! \brief Whether a function body is a root block the parser recreates from a plain body:
   *  named "root", nothing but allocations and a body that holds blocks or is allocated for. */
  static bool IsImplicitRoot(const Stmt& body) {
    auto* realize = AsPtr<BlockRealizeNode>(body);
    if (!realize || !realize->iter_values.empty() || !IsConstInt(realize->predicate, 1)) {
      return false;
    }
    const BlockNode* root = realize->block.get();
    if (root->name_hint != "root" || !root->iter_vars.empty() || !root->reads.empty() ||
        !root->writes.empty() || root->init || !root->match_buffers.empty() ||
        !root->annotations.empty()) {
      return false;
    }
    if (!root->alloc_buffers.empty()) return true;
    // A body that is one block without iterators would itself be parsed as the root (as in
    // TVM): the root around it is printed.
    if (auto* inner = AsPtr<BlockRealizeNode>(root->body)) return !inner->block->iter_vars.empty();
    bool has_block = false;
    PostOrderVisit(root->body, [&](const ObjectRef& n) {
      has_block = has_block || n->kind == NodeKind::kBlockRealize;
    });
    return has_block;
  }

  void PrintAllocBuffers(const BlockNode* block) {
    for (const Buffer& buf : block->alloc_buffers) {
      std::string args = BufferArgs(buf.get(), /*with_data=*/false);
      std::string name = DefineBuffer(buf.get());
      OwnData(buf.get(), name);
      Emit(name + " = " + T("alloc_buffer") + "(" + args + ")");
    }
  }

  /*! \brief `A[vi, 0:16]`: a point where the extent is 1, else a slice. */
  std::string RegionText(const BufferRegionNode* r) {
    std::string buf = BufferRef(r->buffer.get());
    if (r->region.empty()) return buf + "[()]";
    std::vector<std::string> parts;
    for (const Range& range : r->region) {
      if (IsConstInt(range->extent, 1)) {
        parts.push_back(ExprText(range->min));
      } else {
        parts.push_back(ExprText(range->min) + ":" + StopText(range->min, range->extent));
      }
    }
    return buf + "[" + Join(parts) + "]";
  }

  std::string RegionList(const std::vector<BufferRegion>& regions) {
    std::vector<std::string> parts;
    for (const BufferRegion& r : regions) parts.push_back(RegionText(r.get()));
    return Join(parts);
  }

  /*! \brief Whether iterator `i` may print in `T.axis.remap`: a spatial or reduction iterator
   *  bound to an enclosing loop's variable over exactly that loop's range. */
  bool IsRemappable(const IterVarNode* iv, const Expr& value) const {
    if (!cfg_.syntax_sugar) return false;
    if (iv->iter_type != IterVarType::kDataPar && iv->iter_type != IterVarType::kCommReduce) {
      return false;
    }
    auto* var = AsPtr<VarNode>(value);
    if (!var) return false;
    auto loop = loops_.find(var);
    if (loop == loops_.end()) return false;
    return StructuralEqual(iv->dom->min, loop->second->min) &&
           StructuralEqual(iv->dom->extent, loop->second->extent);
  }

  static const char* AxisKindName(IterVarType t) {
    switch (t) {
      case IterVarType::kDataPar:
        return "spatial";
      case IterVarType::kCommReduce:
        return "reduce";
      case IterVarType::kOrdered:
        return "scan";
      default:
        return "opaque";
    }
  }

  /*! \brief Iterator definitions in order: runs of remappable ones as one `T.axis.remap`. */
  /*! \brief `realize` null: a block printed without its realization, whose iterators have no
   *  values (`vi = T.axis.spatial(128)`, as TVM prints them). */
  void PrintBlockIters(const BlockNode* block, const BlockRealizeNode* realize) {
    size_t n = block->iter_vars.size();
    for (size_t i = 0; i < n;) {
      size_t j = i;
      while (realize && j < n && IsRemappable(block->iter_vars[j].get(), realize->iter_values[j])) {
        ++j;
      }
      if (j - i >= 2) {
        std::string kinds;
        std::vector<std::string> vars, values;
        for (size_t k = i; k < j; ++k) {
          const IterVarNode* iv = block->iter_vars[k].get();
          kinds += iv->iter_type == IterVarType::kDataPar ? 'S' : 'R';
          values.push_back(ExprText(realize->iter_values[k]));
          vars.push_back(DefineVar(iv->var.get()));
        }
        size_t line = Emit(Join(vars) + " = " + T("axis.remap") + "(" + Quote(kinds) + ", [" +
                           Join(values) + "])");
        for (size_t k = i; k < j; ++k) BindAt(block->iter_vars[k]->var.get(), line, indent_);
        i = j;
        continue;
      }
      const IterVarNode* iv = block->iter_vars[i].get();
      std::string dom =
          IsConstInt(iv->dom->min, 0)
              ? ExprText(iv->dom->extent)
              : "(" + ExprText(iv->dom->min) + ", " + StopText(iv->dom->min, iv->dom->extent) + ")";
      std::string value = realize ? ", " + ExprText(realize->iter_values[i]) : "";
      std::string var = DefineVar(iv->var.get());
      size_t line = Emit(var + " = " + T(std::string("axis.") + AxisKindName(iv->iter_type)) + "(" +
                         dom + value + ")");
      BindAt(iv->var.get(), line, indent_);
      ++i;
    }
  }

  void PrintBlockContents(const BlockNode* block, const BlockRealizeNode* realize) {
    PrintBlockIters(block, realize);
    if (realize && !IsConstInt(realize->predicate, 1)) {
      Emit(T("where") + "(" + ExprText(realize->predicate) + ")");
    }
    Emit(T("reads") + "(" + RegionList(block->reads) + ")");
    Emit(T("writes") + "(" + RegionList(block->writes) + ")");
    if (!block->annotations.empty()) {
      Emit(T("block_attr") + "(" + AttrDict(block->annotations) + ")");
    }
    PrintAllocBuffers(block);
    for (const MatchBufferRegion& m : block->match_buffers) {
      std::string source = RegionText(m->source.get());
      std::string args = BufferArgs(m->buffer.get(), /*with_data=*/false);
      std::string name = DefineBuffer(m->buffer.get());
      OwnData(m->buffer.get(), name);
      Emit(name + " = " + T("match_buffer") + "(" + source + ", " + args + ")");
    }
    if (block->init) {
      Emit("with " + T("init") + "():");
      PrintBody(block->init);
    }
    tail_ = true;
    VisitStmt(block->body);
  }

  void VisitStmt_(const BlockRealizeNode* op) override {
    size_t line = Emit("with " + T("block") + "(" + Quote(op->block->name_hint) + "):");
    MarkFirstLine(op->block.get(), line);
    ++indent_;
    PrintBlockContents(op->block.get(), op);
    --indent_;
    UnderlineLines(op->block.get(), line);
    for (const IterVar& iv : op->block->iter_vars) ReleaseName(iv->var.get());
  }

  void VisitStmt_(const BlockNode* op) override {
    // A block outside a BlockRealize: its iterators print without values.
    Emit("with " + T("block") + "(" + Quote(op->name_hint) + ", no_realize=True):");
    ++indent_;
    PrintBlockContents(op, nullptr);
    --indent_;
    for (const IterVar& iv : op->iter_vars) ReleaseName(iv->var.get());
  }

  void VisitStmt_(const EvaluateNode* op) override {
    // Statements the parser reads back from Python syntax: return, break, continue.
    if (auto* call = AsPtr<CallNode>(op->value)) {
      if (call->is_op("tir.ret") && call->args.size() == 1) {
        Emit("return " + ExprText(call->args[0]));
        return;
      }
      if ((call->is_op("tir.break") || call->is_op("tir.continue")) && call->args.empty() &&
          call->dtype == DataType::Int(32)) {
        // As TVM prints them (the parser reads `break`/`continue` as the same calls).
        Emit(T(call->is_op("tir.break") ? "break_loop" : "continue_loop") + "()");
        return;
      }
    }
    Emit(T("evaluate") + "(" + ExprText(op->value) + ")");
  }

  // ---- expressions ----
  std::string ExprText(const Expr& e) { return VisitExpr(e).text; }
  std::string Operand(const Expr& e, int min_prec) { return Paren(VisitExpr(e), min_prec); }

  Doc IntDoc(DataType t, int64_t v) const {
    if (t.is_bool()) return {T("bool") + (v ? "(True)" : "(False)")};
    if (t == DataType::Int(32)) return {std::to_string(v), v < 0 ? kUnary : kAtom, true};
    return {TypeText(t) + "(" + IntDigits(t, v) + ")"};
  }

  /*! \brief `min + extent`, folded when both are constants. */
  std::string StopText(const Expr& min, const Expr& extent) {
    auto lo = AsConstInt(min), n = AsConstInt(extent);
    if (lo && n && min->dtype == extent->dtype) return IntDoc(min->dtype, *lo + *n).text;
    if (lo && *lo == 0) return ExprText(extent);
    return Operand(min, kAdditive) + " + " + Operand(extent, kAdditive + 1);
  }

  /*! \brief Subscript text; a unit-stride Ramp prints as the slice `base:base + lanes`. */
  std::string Indices(const std::vector<Expr>& indices, bool allow_slice) {
    if (indices.empty()) return allow_slice ? "()" : "";
    std::vector<std::string> parts;
    for (const Expr& index : indices) {
      auto* ramp = AsPtr<RampNode>(index);
      if (allow_slice && ramp && IsConstInt(ramp->stride, 1)) {
        Expr lanes = ramp->lanes < 0 ? ScalableLanesExpr(-ramp->lanes)
                                     : Expr(IntImmNode::Make(ramp->base->dtype, ramp->lanes));
        parts.push_back(ExprText(ramp->base) + ":" + StopText(ramp->base, lanes));
      } else {
        parts.push_back(ExprText(index));
      }
    }
    return Join(parts);
  }

  Doc CallDoc(const std::string& fn, const std::vector<std::string>& args) {
    return {fn + "(" + Join(args) + ")"};
  }
  Doc CallDoc(const std::string& fn, const std::vector<Expr>& args) {
    std::vector<std::string> texts;
    for (const Expr& a : args) texts.push_back(ExprText(a));
    return CallDoc(fn, texts);
  }

  Doc Infix(const BinaryNode* op, const char* symbol, int prec) {
    Doc a = VisitExpr(op->a), b = VisitExpr(op->b);
    // As TVM: an operator between two constants prints as its node (`T.Add(1, 2)`), since
    // `1 + 2` would fold when read back.
    auto is_const = [](const Expr& e) {
      return e->kind == NodeKind::kIntImm || e->kind == NodeKind::kFloatImm;
    };
    if (is_const(op->a) && is_const(op->b)) {
      return CallDoc(T(NodeKindName(op->kind)), std::vector<std::string>{a.text, b.text});
    }
    // Comparisons chain in Python (`a < b < c`), so a comparison operand is parenthesised.
    int left_min = prec == kCompare ? prec + 1 : prec;
    return {Paren(a, left_min) + " " + symbol + " " + Paren(b, prec + 1), prec};
  }

  Doc VisitExpr_(const IntImmNode* op) override { return IntDoc(op->dtype, op->value); }
  Doc VisitExpr_(const FloatImmNode* op) override {
    double v = op->value;
    std::string text = std::isnan(v)   ? "\"nan\""
                       : std::isinf(v) ? (v > 0 ? "\"inf\"" : "\"-inf\"")
                                       : FloatRepr(v);
    return {TypeText(op->dtype) + "(" + text + ")"};
  }
  // As TVM: a string of several lines prints as a reference into the metadata section.
  Doc VisitExpr_(const StringImmNode* op) override {
    if (op->value.find('\n') == std::string::npos) return {Quote(op->value)};
    return {"metadata[\"tir.StringImm\"][" + std::to_string(MetadataIndex(op)) + "]"};
  }
  Doc VisitExpr_(const VarNode* op) override { return {VarRef(op)}; }
  Doc VisitExpr_(const SizeVarNode* op) override { return {VarRef(op)}; }
  Doc VisitExpr_(const CastNode* op) override {
    return CallDoc(T("Cast"), {Quote(op->dtype.ToString()), ExprText(op->value)});
  }
  Doc VisitExpr_(const AddNode* op) override { return Infix(op, "+", kAdditive); }
  Doc VisitExpr_(const SubNode* op) override { return Infix(op, "-", kAdditive); }
  Doc VisitExpr_(const MulNode* op) override { return Infix(op, "*", kMultiplicative); }
  Doc VisitExpr_(const DivNode* op) override {
    // `/` on integers reads as true division to a Python eye; spell integer Div out.
    if (op->dtype.is_float()) return Infix(op, "/", kMultiplicative);
    return CallDoc(T("Div"), std::vector<Expr>{op->a, op->b});
  }
  Doc VisitExpr_(const ModNode* op) override {
    return CallDoc(T("truncmod"), std::vector<Expr>{op->a, op->b});
  }
  Doc VisitExpr_(const FloorDivNode* op) override { return Infix(op, "//", kMultiplicative); }
  Doc VisitExpr_(const FloorModNode* op) override { return Infix(op, "%", kMultiplicative); }
  Doc VisitExpr_(const MinNode* op) override {
    return CallDoc(T("min"), std::vector<Expr>{op->a, op->b});
  }
  Doc VisitExpr_(const MaxNode* op) override {
    return CallDoc(T("max"), std::vector<Expr>{op->a, op->b});
  }
  Doc VisitExpr_(const EQNode* op) override { return Infix(op, "==", kCompare); }
  Doc VisitExpr_(const NENode* op) override { return Infix(op, "!=", kCompare); }
  Doc VisitExpr_(const LTNode* op) override { return Infix(op, "<", kCompare); }
  Doc VisitExpr_(const LENode* op) override { return Infix(op, "<=", kCompare); }
  Doc VisitExpr_(const GTNode* op) override { return Infix(op, ">", kCompare); }
  Doc VisitExpr_(const GENode* op) override { return Infix(op, ">=", kCompare); }
  Doc VisitExpr_(const AndNode* op) override { return Infix(op, "and", kAnd); }
  Doc VisitExpr_(const OrNode* op) override { return Infix(op, "or", kOr); }
  Doc VisitExpr_(const NotNode* op) override { return {"not " + Operand(op->a, kNot), kNot}; }
  Doc VisitExpr_(const SelectNode* op) override {
    return CallDoc(T("Select"), std::vector<Expr>{op->condition, op->true_value, op->false_value});
  }
  Doc VisitExpr_(const RampNode* op) override {
    return CallDoc(T("Ramp"), {ExprText(op->base), ExprText(op->stride), LanesText(op->lanes)});
  }
  Doc VisitExpr_(const BroadcastNode* op) override {
    return CallDoc(T("Broadcast"), {ExprText(op->value), LanesText(op->lanes)});
  }
  /*! \brief The lanes of a Ramp/Broadcast: "8", or "T.vscale() * 4" for a scalable vector. */
  std::string LanesText(int lanes) {
    return lanes < 0 ? ExprText(ScalableLanesExpr(-lanes)) : std::to_string(lanes);
  }
  Doc VisitExpr_(const ShuffleNode* op) override {
    std::vector<std::string> vectors, indices;
    for (const Expr& v : op->vectors) vectors.push_back(ExprText(v));
    for (const Expr& i : op->indices) indices.push_back(ExprText(i));
    return CallDoc(T("Shuffle"), {"[" + Join(vectors) + "]", "[" + Join(indices) + "]"});
  }
  Doc VisitExpr_(const LetNode* op) override {
    // TVM's form: `T.Let(body, where={x: value})`.
    std::string var = VarRef(op->var.get());
    return CallDoc(T("Let"),
                   {ExprText(op->body), "where={" + var + ": " + ExprText(op->value) + "}"});
  }
  // A constant mask as Compass's DSL prints it, `T.const_pred("15T1FT14F1T")`: its runs of equal
  // lanes, lane 0 first, each with its length, except that a run of one lane after another run of
  // one lane (or at the start) goes without a count (so "TFTF" stays as it is; the mask-string
  // grammar reads a group without a count once, and "1FT" as F then T). Empty when an argument
  // is not a constant.
  static std::string ConstMaskText(const CallNode* op) {
    std::vector<std::pair<bool, size_t>> runs;
    for (const Expr& a : op->args) {
      const auto* imm = AsPtr<IntImmNode>(a);
      if (imm == nullptr) return "";
      bool on = imm->value != 0;
      if (runs.empty() || runs.back().first != on) {
        runs.emplace_back(on, 1);
      } else {
        ++runs.back().second;
      }
    }
    if (runs.empty()) return "";
    std::string text;
    size_t previous = 1;
    for (const auto& [on, length] : runs) {
      if (length != 1 || previous != 1) text += std::to_string(length);
      text += on ? 'T' : 'F';
      previous = length;
    }
    return text;
  }
  Doc VisitExpr_(const CallNode* op) override {
    std::vector<std::string> args;
    for (const Expr& a : op->args) args.push_back(ExprText(a));
    if (auto* gv = AsPtr<GlobalVarNode>(op->op)) return CallDoc(CalleeName(gv), args);
    const auto* op_node = static_cast<const OpNode*>(op->op.get());
    const std::string& name = op_node->name;
    if (name == "dsl.const_mask") {
      std::string text = ConstMaskText(op);
      if (!text.empty()) return CallDoc(T("const_pred"), {Quote(text)});
    }
    std::string short_name = name.compare(0, 4, "tir.") == 0 ? name.substr(4) : "";
    // The T.* name and where the dtype goes, as TVM prints the builtin.
    short_name = op_node->GetStrAttr("script.name", short_name);
    if (IsIdentifier(short_name) && !IsPythonKeyword(short_name)) {
      std::string dtype_at = op_node->GetStrAttr("script.dtype");
      if (TakesDtypeFirst(short_name) || dtype_at == "first") {
        args.insert(args.begin(), Quote(op->dtype.ToString()));
      } else if (dtype_at == "last") {
        args.push_back(Quote(op->dtype.ToString()));
      }
      return CallDoc(T(short_name), args);
    }
    args.insert(args.begin(), {Quote(op->dtype.ToString()), Quote(name)});
    return CallDoc(T("call_intrin"), args);
  }
  Doc VisitExpr_(const BufferLoadNode* op) override {
    std::string buf = BufferRef(op->buffer.get());
    if (op->predicate) {
      std::string indices = Indices(op->indices, /*allow_slice=*/false);
      return {buf + ".vload([" + indices + "], predicate=" + ExprText(op->predicate) + ")"};
    }
    return {buf + "[" + Indices(op->indices, cfg_.syntax_sugar) + "]"};
  }

  PrinterConfig cfg_;
  ScriptOptions opts_;
  /*! \brief Whether an expression printed alone declares what it uses (AsVerboseScript). */
  bool verbose_expr_ = false;
  std::vector<Line> lines_;
  /*! \brief The multi-line strings printed as metadata references, by index. */
  std::vector<const StringImmNode*> metadata_strings_;
  int indent_ = 0;
  bool tail_ = true;
  bool in_module_ = false;
  /*! \brief Inside a function or statement scope, where free names get declarations. */
  bool scoped_ = false;
  Anchor top_vars_, top_buffers_;
  /*! \brief Printed names of vars and buffers (one namespace: Python has one per function). */
  std::unordered_map<const Object*, std::string> names_;
  std::unordered_set<std::string> used_names_;
  /*! \brief Where the declarations depending on a statement-bound variable go. */
  std::unordered_map<const VarNode*, Anchor> var_anchor_;
  /*! \brief Enclosing loops by variable, for `T.axis.remap`. */
  std::unordered_map<const VarNode*, const ForNode*> loops_;
};

}  // namespace

std::string& ScriptHeaderPackage() {
  static std::string package = "tessera";
  return package;
}

std::string AsScript(const ObjectRef& node, const PrinterConfig& cfg) {
  return ScriptPrinter(cfg).Print(node);
}

std::string AsVerboseScript(const ObjectRef& node, const PrinterConfig& cfg) {
  ScriptPrinter printer(cfg);
  printer.set_verbose_expr(true);
  return printer.Print(node);
}

std::string AsScript(const ObjectRef& node, const PrinterConfig& cfg, const ScriptOptions& opts) {
  return ScriptPrinter(cfg, opts).Print(node);
}

}  // namespace tessera
