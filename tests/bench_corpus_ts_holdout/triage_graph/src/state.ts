import { Annotation, MessagesAnnotation } from '@langchain/langgraph';

export const TriageState = Annotation.Root({
  ...MessagesAnnotation.spec,
  issueKey: Annotation<string>(),
  repoDir: Annotation<string>(),
  filedIssue: Annotation<string | undefined>(),
  approvals: Annotation<Record<string, boolean>>({
    reducer: (current, update) => ({ ...current, ...update }),
    default: () => ({}),
  }),
});

export type TriageStateT = typeof TriageState.State;
export type TriageUpdate = typeof TriageState.Update;
