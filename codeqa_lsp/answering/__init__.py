"""From retrieved chunks to a cited answer: providers, prompt, citation checks."""
