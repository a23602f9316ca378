; Classes, interfaces (`interface` and `fun interface` are class_declarations), enums, data
; and sealed classes; `object` singletons. A companion object is no definition of its own:
; its members are called through the class (`Buffer.of(...)`), so they are named `Buffer.of`.
(class_declaration
  name: (identifier) @name
  [(class_body) (enum_class_body)]? @body) @definition.class
(object_declaration name: (identifier) @name (class_body)? @body) @definition.class
; Functions with a body (`{ ... }` or `= expression`); an interface's or an `expect`
; declaration's bodiless function stays in its class's skeleton, as in Java.
; An extension function is named after the type it extends (`fun Buffer.readUtf8Line()` is
; `Buffer.readUtf8Line`), as a Go method is after its receiver.
(function_declaration
  (user_type) @receiver
  .
  name: (identifier) @name
  (function_body) @body) @definition.function
(function_declaration
  (nullable_type) @receiver
  .
  name: (identifier) @name
  (function_body) @body) @definition.function
(function_declaration
  name: (identifier) @name
  (function_body) @body) @definition.function
; `typealias Handler = (Int) -> Unit`: named types are definitions (as in Go, Rust, TS).
(type_alias type: (identifier) @name) @definition.class
