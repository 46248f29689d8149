package connect

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A Spark 3.5 server sends no errorClass in its ErrorInfo (only the
// exception classes and a stack trace; Spark 4.0 added the rest,
// SPARK-45808): the
// error class is then the one Spark's message starts with, so that the
// merge's decisions on PATH_NOT_FOUND and the like hold on 3.5 too.
func TestErrorClassFromAMessageWhenTheServerSendsNone(t *testing.T) {
	s := &Session{}
	for _, tt := range []struct {
		name, message, metadataClass, want string
	}{
		{"3.5, a class", "[PATH_NOT_FOUND] Path does not exist: file:/x/\\*.csv.", "", "PATH_NOT_FOUND"},
		{"3.5, a subclass", "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected", "", "MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION"},
		{"4.0 sends it", "[PATH_NOT_FOUND] Path does not exist", "PATH_NOT_FOUND", "PATH_NOT_FOUND"},
		{"4.0's class wins", "[SOMETHING_ELSE] text", "PATH_NOT_FOUND", "PATH_NOT_FOUND"},
		{"no class", "java.lang.RuntimeException: boom", "", ""},
		{"not Spark's form", "[not a class] text", "", ""},
		{"no closing bracket", "[PATH_NOT_FOUND text", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := status.New(codes.Internal, tt.message)
			info := &errdetails.ErrorInfo{Reason: "org.apache.spark.sql.AnalysisException", Domain: "org.apache.spark",
				Metadata: map[string]string{"classes": `["org.apache.spark.sql.AnalysisException"]`}}
			if tt.metadataClass != "" {
				info.Metadata["errorClass"] = tt.metadataClass
			}
			st, err := st.WithDetails(info)
			if err != nil {
				t.Fatal(err)
			}
			var se *SparkError
			if !errors.As(s.convertError(st.Err()), &se) {
				t.Fatalf("convertError gave no SparkError")
			}
			if se.ErrorClass != tt.want {
				t.Errorf("error class %q, want %q", se.ErrorClass, tt.want)
			}
		})
	}
}

// A task failure's message carries the JVM's stack frames by the dozen:
// the error shows what failed and its causes, not the frames.
func TestSparkErrorLeavesOutStackFrames(t *testing.T) {
	msg := "Job aborted due to stage failure: Task 0 failed: org.apache.spark.SparkException: Exception thrown in awaitResult: \n" +
		"\tat org.apache.spark.util.SparkThreadUtils$.awaitResult(SparkThreadUtils.scala:53)\n" +
		"\tat org.apache.spark.util.ThreadUtils$.awaitResult(ThreadUtils.scala:342)\n" +
		"Caused by: java.lang.RuntimeException: file:/d/a.csv is not a Parquet file. Expected magic number at tail, but found [49, 10, 50, 10]\n" +
		"\tat org.apache.parquet.hadoop.ParquetFileReader.readFooter(ParquetFileReader.java:565)\n" +
		"\t... 12 more"
	e := &SparkError{Message: msg}
	got := e.Error()
	for _, want := range []string{"Job aborted due to stage failure", "Caused by: java.lang.RuntimeException: file:/d/a.csv is not a Parquet file", "(4 lines of the server's stack trace left out)"} {
		if !strings.Contains(got, want) {
			t.Errorf("Error() = %q, lacks %q", got, want)
		}
	}
	if strings.Contains(got, "\tat ") || strings.Contains(got, "more") {
		t.Errorf("Error() keeps stack frames: %q", got)
	}
	if e.Message != msg {
		t.Error("Message lost its text")
	}
	if plain := (&SparkError{Message: "[PATH_NOT_FOUND] Path does not exist: file:/x."}).Error(); plain != "[PATH_NOT_FOUND] Path does not exist: file:/x." {
		t.Errorf("a message without frames changed: %q", plain)
	}
}
