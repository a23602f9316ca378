; JavaScript (also the base of typescript.scm). `@body` saves a tree lookup per definition.
(function_declaration name: (identifier) @name body: (_) @body) @definition.function
(generator_function_declaration name: (identifier) @name body: (_) @body) @definition.function
(class_declaration name: (_) @name body: (_) @body) @definition.class
(method_definition name: (_) @name body: (_) @body) @definition.function

; `app.handle = function handle() {}`, `exports.x = () => {}`: the left-hand side as written.
(expression_statement
  (assignment_expression
    left: (member_expression) @path
    right: [
      (function_expression body: (_) @body)
      (arrow_function body: (_) @body)
      (generator_function body: (_) @body)])) @definition.function
(expression_statement
  (assignment_expression
    left: (member_expression) @path
    right: (class body: (_) @body))) @definition.class
; `res.set = res.header = function header() {}`: named in Python (`_assigned_name`: `res.header`).
(expression_statement
  (assignment_expression
    left: (member_expression) @path
    right: (assignment_expression
      right: [
        (function_expression body: (_) @body)
        (arrow_function body: (_) @body)
        (generator_function body: (_) @body)]))) @definition.function

; `const foo = () => {}`, `var proto = module.exports = function () {}`.
(variable_declarator
  name: (identifier) @name
  value: [
    (function_expression body: (_) @body)
    (arrow_function body: (_) @body)
    (generator_function body: (_) @body)]) @definition.function
(variable_declarator
  name: (identifier) @name
  value: (assignment_expression
    right: [
      (function_expression body: (_) @body)
      (arrow_function body: (_) @body)
      (generator_function body: (_) @body)])) @definition.function
(variable_declarator name: (identifier) @name value: (class body: (_) @body)) @definition.class

; Object-literal members: `{ send: function () {}, get header() {} }` (owner resolved in Python).
(pair
  key: [(property_identifier) (string) (computed_property_name)] @name
  value: [
    (function_expression body: (_) @body)
    (arrow_function body: (_) @body)
    (generator_function body: (_) @body)]) @definition.function

; `defineGetter(req, 'ip', function ip() {})` → `req.ip`.
(expression_statement
  (call_expression
    arguments: (arguments
      .
      [(identifier) (member_expression)] @owner
      .
      (string (string_fragment) @name)
      .
      [(function_expression body: (_) @body) (arrow_function body: (_) @body)]))) @definition.function
