/* parser.y: the grammar of the .bnn language (a pure, reentrant bison parser).
 *
 * The actions only call the small constructors of ast.c, so this file still
 * reads like the grammar.  Statements are order-free (sema.c resolves names
 * across the whole file), so the grammar knows nothing about names.
 *
 *   file      := stmt*
 *   stmt      := 'model' NAME ';'
 *              | 'input' NAME '[' expr (',' expr)* ']' ['int'] ';'
 *              | 'prior' family ';'   |   'posterior' family ';'
 *              | NAME '=' expr ';'    |   NAME '~' call ';'
 *              | 'block' NAME '(' NAME, ... ')' '{' stmt* '}'
 *              | 'return' expr ';'
 *   expr      := call ['~' family] | NAME | NUMBER | '-' NUMBER
 *              | 'true' | 'false' | '(' expr ')' | '(' expr ',' expr, ... ')'
 *   call      := NAME '(' [arg (',' arg)*] ')'
 *   arg       := expr | NAME '=' expr | 'prior' '=' expr
 *   family    := NAME ['(' [arg (',' arg)*] ')']
 *
 * Syntax errors are reported by yyreport_syntax_error below in the form
 * "expected ';' before 'h2'"; recovery skips to the next ';', or to the '}'
 * that closes the block the error is in.  Lists are
 * built by prepending and reversed once (ast_*_reverse).
 */
%require "3.2"
%define api.pure full
%define api.location.type {bnn_loc}
%define parse.error custom
%locations
%expect 0
%param {yyscan_t scanner}

%code requires {
#include "ast.h"
#include "diag.h"
typedef void *yyscan_t;

/* The state shared by the scanner and the parser of one file. */
struct lex_state {
    struct diag *diag;        /* borrowed: where errors go */
    struct ast_arena *arena;  /* borrowed: where the tree lives */
    int line, col;            /* position of the next byte */
    int depth;                /* open parentheses */
    int halted;               /* a fatal lexical problem: pretend the input ended */
    bnn_loc prev;             /* the last token returned (the lookahead, in an error) */
    bnn_loc before;           /* the token before it */
    int prev_token;           /* the kind of the last token returned */
    int before_token;         /* the kind of the token before it */
    bnn_loc open_brace;       /* the '{' of the block being read, if any */
    int in_block;             /* inside a block's braces */
    bnn_loc stmt_start;       /* first token of the current statement */
    int at_stmt_start;        /* the next token begins a statement */
    struct ast_stmt *root;    /* the result: all top-level statements */
};
}

%code provides {
int yylex(YYSTYPE *yylval, bnn_loc *yylloc, yyscan_t scanner);
void yyerror(bnn_loc *loc, yyscan_t scanner, const char *msg);
struct lex_state *yyget_extra(yyscan_t scanner);
}

%code {
#include <string.h>
/* Deep nesting is stopped by the scanner long before this. */
#define YYMAXDEPTH 4000
#define STATE (yyget_extra(scanner))
#define ARENA (STATE->arena)
}

%union {
    const char *str;
    struct { const char *text; double value; int is_integer; } num;
    struct ast_expr *expr;
    struct ast_arg *arg;
    struct ast_family *family;
    struct ast_param *param;
    struct ast_stmt *stmt;
}

%token <str> IDENT "identifier"
%token <num> NUMBER "number"
%token MODEL "model" INPUT "input" PRIOR "prior" POSTERIOR "posterior"
%token BLOCK "block" RETURN "return" TRUE "true" FALSE "false"
%token INT "int"  /* only right after the ']' of an input's dimensions (lexer.l) */
%token <str> ELTYPE "element type"  /* another word there, right before a ';' (lexer.l) */

%type <stmt> stmts body stmt
%type <expr> expr call
%type <arg> args args_opt arg exprs
%type <family> family family_opt
%type <param> params params_opt

%%

file
    : stmts                      { STATE->root = ast_stmts_reverse($1); }
    ;

stmts
    : %empty                     { $$ = NULL; }
    | stmts stmt                 { $$ = $1; if ($2) { $2->next = $1; $$ = $2; } }
    | stmts error '}'            { $$ = $1; yyerrok; }  /* an error in a block's header */
    ;

/* A block's body: an error in its last statement ends at the block's '}',
 * which then closes the block (block below), not a statement. */
body
    : %empty                     { $$ = NULL; }
    | body stmt                  { $$ = $1; if ($2) { $2->next = $1; $$ = $2; } }
    ;

stmt
    : MODEL IDENT ';'
        { if (($$ = ast_stmt(ARENA, AST_MODEL, @$))) { $$->name = $2; $$->name_loc = @2; } }
    | INPUT IDENT '[' exprs ']' ';'
        { if (($$ = ast_stmt(ARENA, AST_INPUT, @$))) {
              $$->name = $2; $$->name_loc = @2; $$->dims = ast_args_reverse($4); } }
    | INPUT IDENT '[' exprs ']' INT ';'    /* input ids[T] int; */
        { if (($$ = ast_stmt(ARENA, AST_INPUT, @$))) {
              $$->name = $2; $$->name_loc = @2; $$->dims = ast_args_reverse($4);
              $$->ids = 1; $$->ids_loc = @6; } }
    | INPUT IDENT '[' exprs ']' ELTYPE ';'  /* input ids[T] integer; */
        { $$ = NULL;
          diag_error(STATE->diag, @6, "unknown element type '%s' for input '%s': write 'int' for "
                     "integer ids, or nothing for real values", $6, $2); }
    | PRIOR family ';'
        { if (($$ = ast_stmt(ARENA, AST_PRIOR, @$))) $$->family = $2; }
    | POSTERIOR family ';'
        { if (($$ = ast_stmt(ARENA, AST_POSTERIOR, @$))) $$->family = $2; }
    | IDENT '=' expr ';'
        { if (($$ = ast_stmt(ARENA, AST_ASSIGN, @$))) {
              $$->name = $1; $$->name_loc = @1; $$->expr = $3; } }
    | IDENT '~' call ';'
        { if (($$ = ast_stmt(ARENA, AST_LIKELIHOOD, @$))) {
              $$->name = $1; $$->name_loc = @1; $$->expr = $3; } }
    | BLOCK IDENT '(' params_opt ')' '{' body '}'
        { if (($$ = ast_stmt(ARENA, AST_BLOCK, @$))) {
              $$->name = $2; $$->name_loc = @2; $$->params = ast_params_reverse($4);
              $$->body = ast_stmts_reverse($7); $$->close_loc = @8; } }
    | BLOCK IDENT '(' params_opt ')' '{' body error '}'
        { $$ = NULL; yyerrok; }  /* return h } */
    | BLOCK IDENT '(' error '}'
        { $$ = NULL; yyerrok; }  /* block b(v n) { ... }: past the body's ';' */
    | RETURN expr ';'
        { if (($$ = ast_stmt(ARENA, AST_RETURN, @$))) $$->expr = $2; }
    | error ';'                  { $$ = NULL; yyerrok; }
    ;

params_opt
    : %empty                     { $$ = NULL; }
    | params                     { $$ = $1; }
    ;

params
    : IDENT                      { $$ = ast_param(ARENA, $1, @1); }
    | params ',' IDENT           { $$ = ast_param(ARENA, $3, @3); if ($$) $$->next = $1; }
    ;

expr
    : call family_opt            { $$ = $1; if ($$ && $2) { $$->family = $2; $$->loc = @$; } }
    | IDENT                      { $$ = ast_name(ARENA, $1, @1); }
    | NUMBER                     { $$ = ast_number(ARENA, $1.text, $1.value, $1.is_integer, @1); }
    | '-' NUMBER                 { $$ = ast_number(ARENA, $2.text, -$2.value, $2.is_integer, @$); }
    | TRUE                       { $$ = ast_bool(ARENA, 1, @1); }
    | FALSE                      { $$ = ast_bool(ARENA, 0, @1); }
    | '(' expr ')'               { $$ = $2; }
    | '(' expr ',' exprs ')'
        { struct ast_arg *first = ast_arg(ARENA, NULL, @2, $2);
          struct ast_arg *rest = ast_args_reverse($4);
          if (first) first->next = rest;
          $$ = ast_tuple(ARENA, first, @$); }
    ;

exprs
    : expr                       { $$ = ast_arg(ARENA, NULL, @1, $1); }
    | exprs ',' expr             { $$ = ast_arg(ARENA, NULL, @3, $3); if ($$) $$->next = $1; }
    ;

call
    : IDENT '(' args_opt ')'     { $$ = ast_call(ARENA, $1, @1, ast_args_reverse($3), @$); }
    ;

args_opt
    : %empty                     { $$ = NULL; }
    | args                       { $$ = $1; }
    ;

args
    : arg                        { $$ = $1; }
    | args ',' arg               { $$ = $3; if ($$) $$->next = $1; }
    ;

arg
    : expr                       { $$ = ast_arg(ARENA, NULL, @1, $1); }
    | IDENT '=' expr             { $$ = ast_arg(ARENA, $1, @1, $3); }
    | PRIOR '=' expr             { $$ = ast_arg(ARENA, "prior", @1, $3); }  /* ~ meanfield(prior = 1e-3) */
    ;

family_opt
    : %empty                     { $$ = NULL; }
    | '~' family                 { $$ = $2; }
    ;

family
    : IDENT                      { $$ = ast_family(ARENA, $1, @1, NULL, @1); }
    | IDENT '(' args_opt ')'     { $$ = ast_family(ARENA, $1, @1, ast_args_reverse($3), @$); }
    ;

%%

/* How an expected token is named: "a name", "';'", "'model'". */
static void parse_expected_name(char *buf, size_t size, yysymbol_kind_t sym)
{
    const char *name = yysymbol_name(sym);
    if (sym == YYSYMBOL_IDENT)
        snprintf(buf, size, "a name");
    else if (sym == YYSYMBOL_NUMBER)
        snprintf(buf, size, "a number");
    else if (sym == YYSYMBOL_YYEOF)
        snprintf(buf, size, "end of input");
    else if (name[0] == '\'')
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "'%s'", name);
}

static int parse_is_keyword(int token)
{
    return token == MODEL || token == INPUT || token == PRIOR || token == POSTERIOR ||
           token == BLOCK || token == RETURN || token == TRUE || token == FALSE;
}

/* The text of the lookahead token, read back from the source. */
static const char *parse_token_text(const struct lex_state *st, bnn_loc loc, size_t *len)
{
    size_t line_len;
    const char *line = source_line(st->diag->src, loc.first_line, &line_len);
    size_t start = (size_t)loc.first_column - 1;
    if (!line || loc.first_column < 1 || start >= line_len) {
        *len = 0;
        return "";
    }
    *len = loc.last_line == loc.first_line && loc.last_column >= loc.first_column
               ? (size_t)(loc.last_column - loc.first_column + 1) : line_len - start;
    if (start + *len > line_len)
        *len = line_len - start;
    return line + start;
}

static int yyreport_syntax_error(const yypcontext_t *ctx, yyscan_t scanner)
{
    enum { MAX_EXPECTED = 4 };
    struct lex_state *st = STATE;
    yysymbol_kind_t expected[MAX_EXPECTED];
    yysymbol_kind_t got = yypcontext_token(ctx);
    bnn_loc loc = *yypcontext_location(ctx);
    int n = yypcontext_expected_tokens(ctx, expected, MAX_EXPECTED);
    char list[256] = "", what[96], name[32];
    size_t len;
    const char *text = parse_token_text(st, loc, &len);
    int i, wants_semi = 0;
    /* The token before the lookahead (end of input never passes lex_token). */
    bnn_loc last = got == YYSYMBOL_YYEOF ? st->prev : st->before;

    if (st->halted || got == YYSYMBOL_YYUNDEF)
        return 0; /* the scanner has already said what is wrong */
    if (got == YYSYMBOL_YYEOF)
        snprintf(what, sizeof what, "end of input");
    else if (len > 40)
        snprintf(what, sizeof what, "'%.40s...'", text);
    else
        snprintf(what, sizeof what, "'%.*s'", (int)len, text);
    /* the optional 'int' of an input is not worth proposing after every
     * input's dimensions: "expected ';' before 'h'" says what is missing */
    for (i = 0; i < n; i++)
        if (expected[i] == YYSYMBOL_INT || expected[i] == YYSYMBOL_ELTYPE)
            expected[i--] = expected[--n];
    for (i = 0; i < n; i++) {
        size_t used = strlen(list);
        parse_expected_name(name, sizeof name, expected[i]);
        wants_semi |= strcmp(name, "';'") == 0;
        snprintf(list + used, sizeof list - used, "%s%s",
                 i == 0 ? "" : i == n - 1 ? " or " : ", ", name);
    }
    if (got == YYSYMBOL_YYEOF && st->in_block) {
        diag_error(st->diag, st->open_brace, "this '{' is never closed: the file ends inside the block");
    } else if (parse_is_keyword(st->before_token) &&
               (strcmp(yysymbol_name(got), "'='") == 0 || strcmp(yysymbol_name(got), "'~'") == 0)) {
        size_t klen;
        const char *kw = parse_token_text(st, st->before, &klen);
        diag_error(st->diag, st->before, "'%.*s' is a keyword and cannot be used as a name",
                   (int)klen, kw);
    } else if (wants_semi && last.first_line > 0) {
        /* A missing ';' belongs right after the previous token, as in GCC. */
        bnn_loc after = last;
        after.first_line = after.last_line;
        after.first_column = after.last_column = last.last_column + 1;
        diag_error(st->diag, after, "expected %s before %s", list, what);
        if (st->stmt_start.first_line && st->stmt_start.first_line != after.first_line)
            diag_note(st->diag, st->stmt_start, "the statement began here");
    } else if (n > 0) {
        if (got == YYSYMBOL_YYEOF && last.first_line > 0) { /* just past the last token */
            loc = last;
            loc.first_line = loc.last_line;
            loc.first_column = loc.last_column = last.last_column + 1;
        }
        diag_error(st->diag, loc, "expected %s before %s", list, what);
    } else {
        diag_error(st->diag, loc, "unexpected %s", what);
    }
    return 0;
}

void yyerror(bnn_loc *loc, yyscan_t scanner, const char *msg)
{
    struct lex_state *st = STATE;
    if (strcmp(msg, "memory exhausted") == 0)
        diag_error(st->diag, *loc, "the model is nested too deeply");
    else
        diag_error(st->diag, *loc, "%s", msg);
}
