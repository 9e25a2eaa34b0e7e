"""An omniidl back end for seat's tests: prints each struct, enum and
typedef with its repository id and members, as TestOmniidl prints the
TypeCodes package idl makes. Run: omniidl -p DIR -bseatdump -I... file.idl"""
from omniidl import idlast, idltype, idlvisitor
def tname(t):
    t = t
    k = t.kind()
    if k == idltype.tk_sequence:
        b = t.bound()
        return "sequence<%s%s>" % (tname(t.seqType()), ", %d" % b if b else "")
    if k in (idltype.tk_string, idltype.tk_wstring):
        b = t.bound()
        n = "string" if k == idltype.tk_string else "wstring"
        return "%s<%d>" % (n, b) if b else n
    if isinstance(t, idltype.Declared):
        return t.decl().repoId()
    return {idltype.tk_short:"short",idltype.tk_long:"long",idltype.tk_ushort:"unsigned short",idltype.tk_ulong:"unsigned long",idltype.tk_float:"float",idltype.tk_double:"double",idltype.tk_boolean:"boolean",idltype.tk_char:"char",idltype.tk_octet:"octet",idltype.tk_any:"any",idltype.tk_longlong:"long long",idltype.tk_ulonglong:"unsigned long long",idltype.tk_longdouble:"long double",idltype.tk_wchar:"wchar",idltype.tk_TypeCode:"TypeCode",idltype.tk_objref:"Object"}.get(k, "kind%d" % k)
def dims(d):
    return "".join("[%d]" % n for n in d.sizes())
class V(idlvisitor.AstVisitor):
    def visitAST(self, n):
        for d in n.declarations(): d.accept(self)
    def visitModule(self, n):
        for d in n.definitions(): d.accept(self)
    def visitInterface(self, n):
        for d in n.contents(): d.accept(self)
    def visitStruct(self, n):
        ms = []
        for m in n.members():
            for d in m.declarators():
                ms.append("%s: %s%s" % (d.identifier(), tname(m.memberType()), dims(d)))
        print("struct %s {%s}" % (n.repoId(), "; ".join(ms)))
    def visitEnum(self, n):
        print("enum %s {%s}" % (n.repoId(), ", ".join(e.identifier() for e in n.enumerators())))
    def visitTypedef(self, n):
        if n.constrType(): n.aliasType().decl().accept(self)
        for d in n.declarators():
            print("typedef %s = %s%s" % (d.repoId(), tname(n.aliasType()), dims(d)))
def run(tree, args):
    tree.accept(V())
