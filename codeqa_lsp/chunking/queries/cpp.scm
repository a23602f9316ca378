; inherits: c
(class_specifier name: (_) @name body: (field_declaration_list)) @definition.class
; A struct specialization (`template <> struct formatter<detail::bigint> {`) or a struct
; defined by its qualified name is a class named by its template (`formatter.parse`); C's
; pattern takes only a plain name. fmt declares every formatter this way (its `parse`
; methods were top-level functions).
(struct_specifier
  name: [(template_type) (qualified_identifier)] @name
  body: (field_declaration_list)) @definition.class
