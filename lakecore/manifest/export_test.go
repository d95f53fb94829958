package manifest

// Summarize exposes WriteManifest's record computation to the black-box tests,
// which compare it with every manifest-list record Java wrote.
var Summarize = summarize
