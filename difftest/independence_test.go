package difftest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// decisionAPI is the model's state machine and the decisions it shares with the
// linearizability model. The engine and the HTTP layer must re-implement these against
// storage instead of calling them; otherwise the differential test would compare the
// model with itself (STYLE.md "engine does not call model.Apply").
var decisionAPI = map[string]bool{"State": true, "NewState": true, "Apply": true, "AdmitProducer": true,
	"StreamSeqRegresses": true, "CreateStream": true, "AppendStream": true, "ReadStream": true,
	"HeadStream": true, "DeleteStream": true, "CreateBucket": true, "GetBucket": true, "DeleteBucket": true,
	"GetAttrs": true, "PutAttrs": true, "AppendBatch": true, "ParseBatchFrames": true, "AppendBatchFrame": true,
	"PublishSnapshot": true, "GetSnapshot": true, "DeleteSnapshot": true, "SetRetention": true, "Bootstrap": true,
	"SnapshotDigest": true, "ParseRecordOrdinal": true, "ParseForkSource": true, "ParseSubOffset": true}

// The engine and httpd use the model's vocabulary only, never its decisions.
func TestEngineAndHTTPDoNotUseTheStateMachine(t *testing.T) {
	for _, dir := range []string{"../engine", "../httpd"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no sources in %s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "model" && decisionAPI[sel.Sel.Name] {
					t.Errorf("%s uses model.%s: the engine and httpd must decide on their own", f, sel.Sel.Name)
				}
				return true
			})
		}
	}
}
