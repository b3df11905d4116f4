"""LangChain's RunnableWithMessageHistory on a transcript store.

Needs `pip install 'transcript-store[langchain]'`. The model here is LangChain's own
`GenericFakeChatModel` (no network, no key); use any chat model instead.

Run: python examples/langchain_history.py [STORE_URL]   (default: sqlite:///chains.db)
"""

from __future__ import annotations

import sys
import warnings

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from transcripts import TranscriptStore
from transcripts.integrations.langchain import TranscriptChatMessageHistory

# Deprecated in LangChain 1 in favour of LangGraph's persistence (the middleware), not gone.
warnings.filterwarnings("ignore", message="RunnableWithMessageHistory is deprecated")


def main(url: str) -> None:
    model = GenericFakeChatModel(
        messages=iter([AIMessage("Hello Ada."), AIMessage("Your name is Ada.")])
    )
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Be brief."), MessagesPlaceholder("history"), ("human", "{question}")]
    )
    with TranscriptStore.open(url) as store:
        chat = RunnableWithMessageHistory(
            prompt | model,
            lambda session_id: TranscriptChatMessageHistory(session_id, store),
            input_messages_key="question",
            history_messages_key="history",
        )
        config = {"configurable": {"session_id": "chat-7"}}
        chat.invoke({"question": "Hi, I am Ada."}, config)
        answer = chat.invoke({"question": "What is my name?"}, config)
        print(answer.content)
        for message in store.active("chat-7"):
            print(f"  {message['role']}: {message['content']}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "sqlite:///chains.db")
